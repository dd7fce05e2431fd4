import { describe, expect, it } from 'vitest';
import { collectPages, MAX_PAGES } from '../../../lambda/adapters/aws/paginate.js';
import { SourceUnavailableError } from '../../../lambda/shared/errors.js';

interface Page {
  readonly Items?: readonly { readonly id: string }[];
  readonly NextToken?: string;
}

/** A fake listing answering from `pages` (by the token sent), recording every token it was sent. */
function listing(pages: Readonly<Record<string, Page>>) {
  const sent: (string | undefined)[] = [];
  const read = (options?: Parameters<typeof collectPages<Page, { id: string }>>[4]) =>
    collectPages(
      'ec2:DescribeSecurityGroups',
      async (token: string | undefined) => {
        sent.push(token);
        const page = pages[token ?? 'first'];
        if (page === undefined) throw new Error(`no page for token ${String(token)}`);
        return page;
      },
      (page) => page.Items,
      (page) => page.NextToken,
      options
    );
  return { sent, read };
}

async function failureOf(promise: Promise<unknown>): Promise<SourceUnavailableError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught
  );
  expect(error).toBeInstanceOf(SourceUnavailableError);
  return error as SourceUnavailableError;
}

const group = (id: string) => ({ id });

describe('collectPages', () => {
  it('follows tokens to the last page', async () => {
    // Prepare
    const { sent, read } = listing({
      first: { Items: [group('sg-1')], NextToken: 'A' },
      A: { Items: [group('sg-2')], NextToken: 'B' },
      B: { Items: [group('sg-3')] },
    });

    // Act
    const items = await read();

    // Assess
    expect(items).toEqual([group('sg-1'), group('sg-2'), group('sg-3')]);
    expect(sent).toEqual([undefined, 'A', 'B']);
  });

  it('ends an alternating token (A, B, A) after 3 calls with an error naming the operation', async () => {
    // Prepare: every page brings a new item, so only the tokens show the loop
    let served = 0;
    const sent: (string | undefined)[] = [];
    const read = collectPages(
      'ec2:DescribeSecurityGroups',
      async (token: string | undefined) => {
        sent.push(token);
        served += 1;
        return { Items: [group(`sg-${served}`)], NextToken: token === 'A' ? 'B' : 'A' };
      },
      (page) => page.Items,
      (page) => page.NextToken
    );

    // Act
    const error = await failureOf(read);

    // Assess
    expect(error.source).toBe('ec2:DescribeSecurityGroups');
    expect(error.reason).toBe('invalid-response');
    expect(error.message).toMatch(
      /^ec2:DescribeSecurityGroups pagination repeated an earlier token after 3 pages: the listing is incomplete/
    );
    expect(sent).toEqual([undefined, 'A', 'B']);
  });

  it('ends a token that repeats immediately with the error, not with the items so far', async () => {
    // Prepare
    const { sent, read } = listing({
      first: { Items: [group('sg-1')], NextToken: 'A' },
      A: { Items: [group('sg-2')], NextToken: 'A' },
    });

    // Act
    const error = await failureOf(read());

    // Assess
    expect(error.message).toContain('repeated an earlier token after 2 pages');
    expect(sent).toEqual([undefined, 'A']);
  });

  it('fails at the page budget, saying the budget, instead of returning partial data', async () => {
    // Prepare: an endless listing of fresh pages
    let calls = 0;
    const endless = (maxPages?: number) =>
      collectPages(
        'iam:ListRolePolicies',
        async (token: string | undefined) => {
          calls += 1;
          const page = Number(token ?? '0') + 1;
          return { PolicyNames: [`policy-${page}`], Marker: String(page) };
        },
        (page) => page.PolicyNames,
        (page) => page.Marker,
        maxPages === undefined ? {} : { maxPages }
      );

    // Act
    const small = await failureOf(endless(5));
    const callsAtSmall = calls;
    calls = 0;
    const standard = await failureOf(endless());

    // Assess
    expect(small.message).toContain(
      'iam:ListRolePolicies pagination still announced more pages after its budget of 5 pages'
    );
    expect(callsAtSmall).toBe(5);
    expect(standard.message).toContain(`after its budget of ${MAX_PAGES} pages`);
    expect(calls).toBe(MAX_PAGES);
  });

  it('reads a listing of exactly the budget', async () => {
    // Prepare
    const { read } = listing({
      first: { Items: [group('sg-1')], NextToken: 'A' },
      A: { Items: [group('sg-2')], NextToken: 'B' },
      B: { Items: [group('sg-3')] },
    });

    // Act
    const items = await read({ maxPages: 3 });

    // Assess
    expect(items).toHaveLength(3);
  });

  it('accepts empty pages with fresh tokens (EC2 filters after paging)', async () => {
    // Prepare
    const { sent, read } = listing({
      first: { Items: [], NextToken: 'A' },
      A: { NextToken: 'B' },
      B: { Items: [], NextToken: 'C' },
      C: { Items: [group('sg-1')] },
    });

    // Act
    const items = await read();

    // Assess
    expect(items).toEqual([group('sg-1')]);
    expect(sent).toEqual([undefined, 'A', 'B', 'C']);
  });

  it('fails on a non-empty page holding only items already listed, with fresh tokens', async () => {
    // Prepare: page A repeats the first page's items in another order
    const { sent, read } = listing({
      first: { Items: [group('sg-1'), group('sg-2')], NextToken: 'A' },
      A: { Items: [group('sg-2'), group('sg-1')], NextToken: 'B' },
      B: { Items: [group('sg-3')] },
    });

    // Act
    const error = await failureOf(read());

    // Assess
    expect(error.source).toBe('ec2:DescribeSecurityGroups');
    expect(error.reason).toBe('invalid-response');
    expect(error.message).toContain(
      'ec2:DescribeSecurityGroups pagination returned page 2 with only items already listed'
    );
    expect(sent).toEqual([undefined, 'A']);
  });

  it('accepts a page that repeats some items but brings a new one', async () => {
    // Prepare
    const { read } = listing({
      first: { Items: [group('sg-1')], NextToken: 'A' },
      A: { Items: [group('sg-1'), group('sg-2')] },
    });

    // Act
    const items = await read();

    // Assess
    expect(items).toEqual([group('sg-1'), group('sg-1'), group('sg-2')]);
  });

  it('compares items by the identity the caller gives, and by content without one', async () => {
    // Prepare: same id, other content (an id function sees a repeat; content does not)
    const pages = {
      first: { Items: [{ id: 'sg-1', name: 'a' }], NextToken: 'A' },
      A: { Items: [{ id: 'sg-1', name: 'b' }] },
    };

    // Act
    const byId = await failureOf(listing(pages).read({ identityOf: (item) => item.id }));
    const byContent = await listing(pages).read();
    const idLess = await listing(pages).read({ identityOf: () => undefined });

    // Assess
    expect(byId.message).toContain('returned page 2 with only items already listed');
    expect(byContent).toHaveLength(2);
    expect(idLess).toHaveLength(2);
  });

  it('passes the page request’s own failure through unchanged', async () => {
    // Prepare
    const denied = Object.assign(new Error('denied'), { name: 'AccessDenied' });
    const read = collectPages(
      'ec2:DescribeSubnets',
      async () => {
        throw denied;
      },
      (page: Page) => page.Items,
      (page) => page.NextToken
    );

    // Act
    const error = await read.catch((caught: unknown) => caught);

    // Assess
    expect(error).toBe(denied);
  });
});
