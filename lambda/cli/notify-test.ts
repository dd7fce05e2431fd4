// `nodeclass-scan notify-test --stack NAME`: after a deploy, sends one clearly-labelled test message
// through the deployment's findings topic, so email and Slack delivery can be checked before a real
// finding needs them. The topic is found by the tag the construct puts on it (its stack's name),
// among the topics whose CloudFormation-generated name starts with the stack's name.
import {
  ListTagsForResourceCommand,
  ListTopicsCommand,
  PublishCommand,
  SNSClient,
} from '@aws-sdk/client-sns';
import type { Command } from 'commander';
import { collectPages } from '../adapters/aws/paginate.js';
import { chatbotNotification } from '../core/notify/chatbot.js';
import { regionProblem } from '../core/region.js';
import { ConfigError } from '../shared/errors.js';
import { FINDINGS_TOPIC_TAG } from '../shared/telemetry.js';
import type { CommandContext } from './command-context.js';
import { terminalSafe } from './terminal.js';

export type SnsSender = Pick<SNSClient, 'send'>;

/** The stack's findings topic; a usage error naming the stack when there is none, or several. */
async function findFindingsTopic(sns: SnsSender, stack: string): Promise<string> {
  const topics = await collectPages(
    'sns:ListTopics',
    (nextToken) =>
      sns.send(new ListTopicsCommand(nextToken === undefined ? {} : { NextToken: nextToken })),
    (page) => page.Topics,
    (page) => page.NextToken
  );
  // CloudFormation names a topic it creates `<stack>-<logical id>-<random>`.
  const candidates = topics
    .map((topic) => topic.TopicArn ?? '')
    .filter((arn) => (arn.split(':')[5] ?? '').startsWith(`${stack}-`));
  const matches: string[] = [];
  for (const arn of candidates) {
    const { Tags = [] } = await sns.send(new ListTagsForResourceCommand({ ResourceArn: arn }));
    if (Tags.some((tag) => tag.Key === FINDINGS_TOPIC_TAG && tag.Value === stack)) {
      matches.push(arn);
    }
  }
  if (matches.length === 1 && matches[0] !== undefined) return matches[0];
  if (matches.length === 0) {
    throw new ConfigError(
      `no findings topic of stack "${stack}" in this region: check --stack (the stackName setting) and --region (the homeRegion setting), or pass --topic-arn (the stack's TopicArn output)`
    );
  }
  throw new ConfigError(
    `several findings topics are tagged for stack "${stack}" (${matches.join(', ')}): pass --topic-arn`
  );
}

/** The test message: no `severity` attribute, so every email filter lets it through (as alarms). */
function testMessage(stack: string, now: Date) {
  const title = `nodeclass-scanner test notification (${stack})`;
  const text =
    `This is a test message sent with \`nodeclass-scan notify-test\` at ${now.toISOString()}, ` +
    `through the findings topic of the ${stack} deployment. It is not a finding: nothing needs doing. ` +
    'Receiving it means this channel gets the scanner’s alerts.';
  const chatbot = chatbotNotification({
    id: `notify-test-${now.getTime()}`,
    eventType: 'NotifyTest',
    title,
    description: text,
    keywords: ['test'],
  });
  return {
    subject: `[TEST] ${title}`,
    bodies: { default: text, email: text, https: JSON.stringify(chatbot) },
  };
}

async function notifyTest(input: {
  readonly sns: SnsSender;
  readonly stack: string;
  readonly topicArn?: string | undefined;
  readonly now: Date;
}): Promise<{ readonly topicArn: string; readonly messageId: string }> {
  const topicArn = input.topicArn ?? (await findFindingsTopic(input.sns, input.stack));
  const message = testMessage(input.stack, input.now);
  const sent = await input.sns.send(
    new PublishCommand({
      TopicArn: topicArn,
      Subject: message.subject,
      Message: JSON.stringify(message.bodies),
      MessageStructure: 'json',
      MessageAttributes: { kind: { DataType: 'String', StringValue: 'test' } },
    })
  );
  return { topicArn, messageId: sent.MessageId ?? '' };
}

interface NotifyTestFlags {
  stack?: string;
  region?: string;
  profile?: string;
  topicArn?: string;
}

export interface NotifyTestDeps {
  readonly sns: (options: { region?: string; profile?: string }) => SnsSender;
}

const defaultDeps: NotifyTestDeps = { sns: (options) => new SNSClient(options) };

export function registerNotifyTestCommand(
  program: Command,
  { io }: CommandContext,
  deps: NotifyTestDeps = defaultDeps
): void {
  program
    .command('notify-test')
    .description(
      "Send a test message through a deployment's findings topic (email and Slack), to check delivery."
    )
    .requiredOption('--stack <name>', 'the scanner stack (the stackName setting)')
    .option('--region <region>', "the stack's region (default: the SDK default chain)")
    .option('--profile <profile>', 'named AWS profile')
    .option('--topic-arn <arn>', "the topic itself (the stack's TopicArn output): no lookup")
    .action(async (flags: NotifyTestFlags) => {
      const stack = flags.stack ?? '';
      const problem = flags.region === undefined ? undefined : regionProblem(flags.region);
      if (problem !== undefined) throw new ConfigError(`--region: ${problem}`);
      const sns = deps.sns({
        ...(flags.region === undefined ? {} : { region: flags.region }),
        ...(flags.profile === undefined ? {} : { profile: flags.profile }),
      });
      let sent: { readonly topicArn: string; readonly messageId: string };
      try {
        sent = await notifyTest({ sns, stack, topicArn: flags.topicArn, now: io.now() });
      } catch (error) {
        if (error instanceof ConfigError) throw error;
        // Credentials, permissions (README: sns:ListTopics, …), region: the caller's to fix.
        const { name, message } = error instanceof Error ? error : new Error(String(error));
        throw new ConfigError(`notify-test: ${name}: ${message.split('\n')[0] ?? ''}`);
      }
      io.stdout(
        `Sent a test message (${terminalSafe(sent.messageId)}) to ${terminalSafe(sent.topicArn)}. ` +
          'Email subscribers who confirmed get it within a minute, and so does the Slack channel.\n'
      );
    });
}
