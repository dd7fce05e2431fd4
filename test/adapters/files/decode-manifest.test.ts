// Manifest bytes decoded as kubectl decodes them (k8s.io/cli-runtime FileVisitor: golang.org/x/text
// BOMOverride over UTF-8), and standard input holding nothing refused as kubectl refuses it.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { loadManifests } from '../../../lambda/adapters/files/manifest-source.js';
import { decodeManifestBytes, readCapped } from '../../../lambda/adapters/files/read-input.js';
import { useTempTrees } from '../../cli/support/run-cli.js';

const tree = useTempTrees();
const TEXT = 'apiVersion: v1\nkind: ConfigMap # é, ✓, 𝄞\n';

const utf16be = (text: string) => Buffer.from(text, 'utf16le').swap16();

describe('decodeManifestBytes', () => {
  it('reads UTF-8, with or without its byte order mark', () => {
    expect(decodeManifestBytes(Buffer.from(TEXT))).toBe(TEXT);
    expect(
      decodeManifestBytes(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(TEXT)]))
    ).toBe(TEXT);
  });

  it('reads UTF-16LE and UTF-16BE by their byte order mark, dropping it', () => {
    expect(
      decodeManifestBytes(Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(TEXT, 'utf16le')]))
    ).toBe(TEXT);
    expect(decodeManifestBytes(Buffer.concat([Buffer.from([0xfe, 0xff]), utf16be(TEXT)]))).toBe(
      TEXT
    );
  });

  it('replaces what does not decode, as Go does, instead of failing', () => {
    expect(decodeManifestBytes(Buffer.from([0x61, 0xe9, 0x62]))).toBe('a\ufffdb');
    // An odd trailing byte of UTF-16.
    expect(decodeManifestBytes(Buffer.from([0xfe, 0xff, 0x00, 0x61, 0x00]))).toBe('a\ufffd');
  });

  it('refuses UTF-32, which kubectl cannot read', () => {
    for (const bom of [
      [0xff, 0xfe, 0, 0],
      [0, 0, 0xfe, 0xff],
    ]) {
      expect(() => decodeManifestBytes(Buffer.from([...bom, 0x61, 0, 0, 0]))).toThrow(
        'is UTF-32 (byte order mark), which kubectl cannot read: save it as UTF-8; not scanned'
      );
    }
  });

  it('leaves UTF-16 without a byte order mark as UTF-8, whose NUL characters the parser refuses', () => {
    expect(decodeManifestBytes(Buffer.from('a: 1', 'utf16le'))).toBe(
      'a\u0000:\u0000 \u00001\u0000'
    );
  });
});

describe('readCapped (standard input)', () => {
  it('decodes UTF-16 split across chunks, even inside a character', () => {
    const bytes = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(TEXT, 'utf16le')]);
    const chunks = [bytes.subarray(0, 1), bytes.subarray(1, 7), bytes.subarray(7)];
    return expect(readCapped(Readable.from(chunks), 1024, 'maxInputBytes')).resolves.toBe(TEXT);
  });
});

const NODECLASS = `apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: wide
spec:
  role: KarpenterNodeRole
  metadataOptions:
    httpTokens: optional
`;

const cluster = { name: '', partition: 'aws' } as const;

describe('loadManifests', () => {
  it('scans UTF-16 files found in a directory, with the lines of their text', async () => {
    const dir = tree();
    writeFileSync(
      join(dir, 'le.yaml'),
      Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(NODECLASS, 'utf16le')])
    );
    writeFileSync(
      join(dir, 'be.yaml'),
      Buffer.concat([Buffer.from([0xfe, 0xff]), utf16be(NODECLASS.replace('wide', 'wide-be'))])
    );
    const loaded = await loadManifests({ paths: [dir], cluster });
    expect(loaded.errors).toEqual([]);
    expect(loaded.nodeClasses.map((entry) => entry.name)).toEqual(['wide-be', 'wide']);
    expect(loaded.nodeClasses[1]?.source?.positions?.['spec.metadataOptions.httpTokens']).toEqual({
      line: 8,
      column: 5,
    });
  });

  it('names a UTF-32 file and a UTF-16 file without byte order mark as input errors', async () => {
    const dir = tree();
    writeFileSync(
      join(dir, 'a.yaml'),
      Buffer.concat([Buffer.from([0xff, 0xfe, 0, 0]), Buffer.from('a: 1\n', 'utf16le')])
    );
    writeFileSync(join(dir, 'b.yaml'), Buffer.from(NODECLASS, 'utf16le'));
    const loaded = await loadManifests({ paths: [dir], cluster });
    expect(loaded.errors).toEqual([
      { source: join(dir, 'a.yaml'), message: expect.stringContaining('is UTF-32') },
      {
        source: `${join(dir, 'b.yaml')}:1`,
        message: expect.stringMatching(/U\+0000: UTF-16 or UTF-32 without a byte order mark/),
      },
    ]);
  });

  it('refuses standard input that is empty or holds only comments and empty documents', async () => {
    const read = (text: string) =>
      loadManifests({ paths: ['-'], cluster, readStdin: async () => text });
    expect((await read('')).errors).toEqual([
      {
        source: '<stdin>',
        message: 'is empty: no manifest to scan (did the command before the pipe fail?)',
      },
    ]);
    expect((await read(' \n\n')).errors).toHaveLength(1);
    expect((await read('# generated\n---\n---\n')).errors).toEqual([
      {
        source: '<stdin>',
        message: 'holds no manifest, only comments or empty documents: nothing to scan',
      },
    ]);
  });

  it('accepts standard input holding objects, even no NodeClass (an empty List from kubectl get)', async () => {
    const read = (text: string) =>
      loadManifests({ paths: ['-'], cluster, readStdin: async () => text });
    expect((await read('apiVersion: v1\nkind: List\nitems: []\n')).errors).toEqual([]);
    expect((await read('apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n')).errors).toEqual(
      []
    );
    // Its own error, not a second one saying it is empty.
    expect((await read('a: [unclosed\n')).errors).toHaveLength(1);
  });
});
