// A list whose `continue` tokens go round must fail, never return the pages read so far as the
// whole list (a partial NodeClass list would make checks judge half a cluster).
import { describe, expect, it } from 'vitest';
import { kubeFailureOf, sendJson, statusBody, useKubeApiServer } from './tls-fixtures.js';

const NODECLASSES = '/apis/karpenter.k8s.aws/v1/ec2nodeclasses';

const api = useKubeApiServer({ pageSize: 2 });

const nodeClass = (name: string, uid = `uid-${name}`) => ({ metadata: { name, uid } });

/** The continue token each request sent (null for the first page). */
const sentTokens = () => api.server.requests.map(({ url }) => url.searchParams.get('continue'));

describe('kube-client continue loop', () => {
  it('fails naming the resource when the server alternates continue tokens A, B, A', async () => {
    // Prepare: fresh items on every page, so only the token shows the loop
    let served = 0;
    api.server.handle((_req, res, url) => {
      served += 1;
      const next = url.searchParams.get('continue') === 'A' ? 'B' : 'A';
      sendJson(res, 200, { metadata: { continue: next }, items: [nodeClass(`n${served}`)] });
    });

    // Act
    const error = await kubeFailureOf(api.client().list(NODECLASSES));

    // Assess
    expect(error.reason).toBe('invalid-response');
    expect(error.kind).toBe('malformed');
    expect(error.path).toBe(NODECLASSES);
    expect(error.message).toBe(
      `listing ${NODECLASSES} on ${api.server.endpoint} repeated an earlier continue token after 3 pages`
    );
    expect(sentTokens()).toEqual([null, 'A', 'B']);
  });

  it('fails when a page with a fresh token brings only objects already listed (by uid)', async () => {
    // Prepare: the same two objects again, under new names' tokens
    api.server.handle((_req, res, url) => {
      const page = Number(url.searchParams.get('continue') ?? '0') + 1;
      sendJson(res, 200, {
        metadata: { continue: String(page) },
        items: page === 1 ? [nodeClass('a'), nodeClass('b')] : [nodeClass('b'), nodeClass('a')],
      });
    });

    // Act
    const error = await kubeFailureOf(api.client().list(NODECLASSES));

    // Assess
    expect(error.reason).toBe('invalid-response');
    expect(error.message).toContain(
      `listing ${NODECLASSES} on ${api.server.endpoint} returned page 2 with only items already listed`
    );
    expect(api.server.requests).toHaveLength(2);
  });

  it('tells objects apart by namespace and name when they carry no uid', async () => {
    // Prepare: the same names in another namespace are other objects
    api.server.handle((_req, res, url) => {
      const namespaced = (namespace: string) => [
        { metadata: { namespace, name: 'karpenter' } },
        { metadata: { namespace, name: 'webhook' } },
      ];
      if (url.searchParams.get('continue') === null)
        sendJson(res, 200, { metadata: { continue: 'p2' }, items: namespaced('kube-system') });
      else if (url.searchParams.get('continue') === 'p2')
        sendJson(res, 200, { metadata: { continue: 'p3' }, items: namespaced('karpenter') });
      else sendJson(res, 200, { metadata: { continue: 'p4' }, items: namespaced('karpenter') });
    });

    // Act
    const error = await kubeFailureOf(api.client().list('/apis/apps/v1/deployments'));

    // Assess: pages 1 and 2 are distinct, page 3 repeats page 2
    expect(error.message).toContain('returned page 3 with only items already listed');
    expect(sentTokens()).toEqual([null, 'p2', 'p3']);
  });

  it('accepts an empty page with a fresh token and a page that repeats some objects', async () => {
    // Prepare
    api.server.handle((_req, res, url) => {
      const token = url.searchParams.get('continue');
      if (token === null)
        sendJson(res, 200, { metadata: { continue: 'p2' }, items: [nodeClass('a')] });
      else if (token === 'p2') sendJson(res, 200, { metadata: { continue: 'p3' }, items: [] });
      else sendJson(res, 200, { metadata: {}, items: [nodeClass('a'), nodeClass('b')] });
    });

    // Act
    const items = await api.client().list(NODECLASSES);

    // Assess
    expect(items).toEqual([nodeClass('a'), nodeClass('a'), nodeClass('b')]);
    expect(sentTokens()).toEqual([null, 'p2', 'p3']);
  });

  it('forgets the tokens and objects of a list restarted after 410', async () => {
    // Prepare: the restarted list hands out the same token and objects as the expired one
    let calls = 0;
    api.server.handle((_req, res, url) => {
      calls += 1;
      const token = url.searchParams.get('continue');
      if (token === 'c1' && calls === 2) {
        sendJson(res, 410, statusBody(410, 'Expired', 'continue token expired'));
      } else if (token === null) {
        sendJson(res, 200, { metadata: { continue: 'c1' }, items: [nodeClass('a')] });
      } else sendJson(res, 200, { metadata: {}, items: [nodeClass('b')] });
    });

    // Act
    const items = await api.client().list(NODECLASSES);

    // Assess
    expect(items).toEqual([nodeClass('a'), nodeClass('b')]);
    expect(sentTokens()).toEqual([null, 'c1', null, 'c1']);
  });
});
