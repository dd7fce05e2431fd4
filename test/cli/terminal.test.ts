import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { expiredRuleWarnings } from '../../lambda/cli/config-file.js';
import { formatCatalog } from '../../lambda/cli/formats/catalog.js';
import { escapeXmlAttribute, escapeXmlText } from '../../lambda/cli/formats/xml.js';
import { formatClusterProgress } from '../../lambda/cli/plan.js';
import { terminalOutput, terminalSafe, visibleEscape } from '../../lambda/cli/terminal.js';
import type { CheckMeta } from '../../lambda/core/check.js';
import { CHECKS } from '../../lambda/core/checks/index.js';
import { runCliCaptured } from './support/run-cli.js';

const ESC = '\u001b';
// Every character a terminal must not receive raw from data (tab and line feed are layout).
const UNSAFE =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point.
  /[\u0000-\u0008\u000B-\u001F\u007F-\u009F\u061C\u200E\u200F\u2028-\u202E\u2066-\u2069]/;
const SGR = new RegExp(`${ESC}\\[[0-9;]*m`, 'g');

/** Strings rich in what matters here: controls, bidi characters, SGR and other escape sequences. */
const hostileText = fc
  .array(
    fc.oneof(
      fc.string({ unit: 'binary', maxLength: 8 }),
      fc.constantFrom(
        `${ESC}[2J`,
        `${ESC}]0;title\u0007`,
        `${ESC}[1;31m`,
        `${ESC}[0m`,
        `${ESC}[31`,
        '\u009b2J',
        '\u202e',
        '\u2066',
        '\u2069',
        '\u200f',
        '\u061c',
        '\u2028',
        '\r',
        '\n',
        '\t',
        '\u007f',
        '\\u001B'
      ),
      fc.integer({ min: 0, max: 0x9f }).map((code) => String.fromCharCode(code))
    ),
    { maxLength: 12 }
  )
  .map((parts) => parts.join(''));

describe('terminalSafe', () => {
  it('shows ESC[2J, ESC]0;…BEL, C1 CSI, DEL and bidi controls as \\uXXXX', () => {
    expect(terminalSafe(`a${ESC}[2Jb${ESC}]0;t\u0007c\u009b31md\u007fe\u202ef\u2066g\u2069`)).toBe(
      'a\\u001B[2Jb\\u001B]0;t\\u0007c\\u009B31md\\u007Fe\\u202Ef\\u2066g\\u2069'
    );
  });

  it('escapes line breaks and tabs too: data never starts a line of its own', () => {
    expect(terminalSafe('x\nnodeclass-scan: fake\r\ty\u2028z')).toBe(
      'x\\u000Anodeclass-scan: fake\\u000D\\u0009y\\u2028z'
    );
  });

  it('keeps printable text of every script, emoji sequences with joiners included', () => {
    const text = 'é ü 日本 שלום مرحبا 👩‍💻 🇪🇺 ∗ ‹›';
    expect(terminalSafe(text)).toBe(text);
  });

  it('leaves no raw unsafe character and is undone by reading the escapes back', () => {
    fc.assert(
      fc.property(hostileText, (text) => {
        const safe = terminalSafe(text);
        expect(safe).not.toMatch(UNSAFE);
        expect(safe).not.toMatch(/[\n\t]/);
        if (!text.includes('\\')) {
          const back = safe.replace(/\\u([0-9A-F]{4})/g, (_match, hex: string) =>
            String.fromCharCode(Number.parseInt(hex, 16))
          );
          expect(back).toBe(text);
        }
      })
    );
  });
});

describe('terminalOutput', () => {
  it('keeps line breaks, tabs and, when asked, SGR colour sequences', () => {
    const text = `${ESC}[1;31mHIGH${ESC}[0m\tx\n`;
    expect(terminalOutput(text, { sgr: true })).toBe(text);
    expect(terminalOutput(text, { sgr: false })).toBe('\\u001B[1;31mHIGH\\u001B[0m\tx\n');
  });

  it('escapes every other escape sequence even with colour on', () => {
    expect(
      terminalOutput(`${ESC}[2J${ESC}]0;t\u0007${ESC}[31${ESC}[?25l\u009b1m\r`, { sgr: true })
    ).toBe('\\u001B[2J\\u001B]0;t\\u0007\\u001B[31\\u001B[?25l\\u009B1m\\u000D');
  });

  it('leaves no raw unsafe character but SGR (colour on) and none at all (colour off)', () => {
    fc.assert(
      fc.property(hostileText, (text) => {
        expect(terminalOutput(text, { sgr: true }).replace(SGR, '')).not.toMatch(UNSAFE);
        const plain = terminalOutput(text, { sgr: false });
        expect(plain).not.toMatch(UNSAFE);
        expect(plain).not.toContain(ESC);
      })
    );
  });

  it('keeps JSON valid and every value the same', () => {
    const json = fc
      .jsonValue({ maxDepth: 3 })
      .chain((base) =>
        fc.dictionary(hostileText, fc.oneof(hostileText, fc.constant(base)), { maxKeys: 4 })
      );
    fc.assert(
      fc.property(json, (value) => {
        const text = JSON.stringify(value, null, 2);
        for (const sgr of [false, true]) {
          const guarded = terminalOutput(text, { sgr });
          expect(guarded).not.toMatch(UNSAFE);
          expect(JSON.parse(guarded)).toEqual(JSON.parse(text));
        }
      })
    );
  });

  it('passes report-sized output through unchanged when it holds nothing to escape', () => {
    const text = `${'ordinary line of a report · é\n'.repeat(100_000)}`;
    expect(terminalOutput(text, { sgr: false })).toBe(text);
  });
});

describe('every terminal line', () => {
  it('progress: a hostile cluster name and server answer stay on one escaped line', () => {
    const line = formatClusterProgress({
      cluster: `prod${ESC}[2J`,
      index: 1,
      total: 2,
      outcome: 'unavailable',
      nodeClasses: 0,
      message: `HTTP 500: ${ESC}]0;pwned\u0007\nnodeclass-scan: fake\u202e`,
    });
    expect(line).toBe(
      '[1/2] prod\\u001B[2J: not read (HTTP 500: \\u001B]0;pwned\\u0007\\u000Anodeclass-scan: fake\\u202E)\n'
    );
  });

  it('expired-rule warning: the config file name and the rule are escaped', () => {
    const [warning] = expiredRuleWarnings(
      {
        file: `cfg${ESC}]0;t\u0007.yaml`,
        ignore: [
          {
            check: 'ami-selector-pinned',
            resource: `*/EC2NodeClass/x\n${ESC}[2J`,
            reason: 'r',
            expires: '2026-01-01',
          },
        ],
      },
      new Date('2026-11-01T00:00:00Z')
    );
    expect(warning).toBe(
      'nodeclass-scan: warning: cfg\\u001B]0;t\\u0007.yaml: ignore[0] (ami-selector-pinned on */EC2NodeClass/x\\u000A\\u001B[2J) expired 2026-01-01; its findings are reported again\n'
    );
  });

  it('checks catalog: a cell can neither act on the terminal nor break its row', () => {
    const [first] = CHECKS;
    if (!first) throw new Error('no checks');
    const meta: CheckMeta = {
      ...first,
      id: `x${ESC}[2J`,
      title: `title\n\u202eevil`,
      references: [`https://example.com/${ESC}]8;;x\u0007`],
    };
    const text = formatCatalog([meta], 'table');
    expect(text).not.toMatch(UNSAFE);
    expect(text.split('\n')[1]).toContain('x\\u001B[2J');
    expect(text.split('\n')[1]).toContain('title\\u000A\\u202Eevil');
  });

  it('XML: C1, bidi controls and carriage returns are not left raw', () => {
    expect(escapeXmlText('a\u009bb\u202ec\u2066d\re\tf\ng')).toBe(
      'a\\u009Bb\\u202Ec\\u2066d&#13;e\tf\ng'
    );
    expect(escapeXmlAttribute('a\r\n\tb')).toBe('a&#13;&#10;&#9;b');
    expect(visibleEscape('\ud800')).toBe('\\uD800');
  });

  it('the CLI: commander usage errors quoting hostile arguments come out escaped', async () => {
    const run = await runCliCaptured(['scan', `--x${ESC}]0;t\u0007\u202e`]);
    expect(run.code).toBe(2);
    expect(run.stderr).not.toMatch(UNSAFE);
    expect(run.stderr).toContain('--x\\u001B]0;t\\u0007\\u202E');
  });
});
