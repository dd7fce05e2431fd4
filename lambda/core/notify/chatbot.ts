// AWS Chatbot (Amazon Q Developer in chat applications) custom notification schema: `version` must
// be "1.0", `source` must be "custom", `content.description` is required; payloads of another shape
// are dropped silently (https://docs.aws.amazon.com/chatbot/latest/adminguide/custom-notifs.html). `threadId` keeps one Slack thread per finding.
import { markdownBlocks, sanitizeText, type TextBlock } from './sanitize.js';

export interface ChatbotNotification {
  readonly version: '1.0';
  readonly source: 'custom';
  readonly id?: string;
  readonly content: {
    readonly textType: 'client-markdown';
    readonly title: string;
    readonly description: string;
    readonly nextSteps?: readonly string[];
    readonly keywords?: readonly string[];
  };
  readonly metadata?: {
    readonly threadId?: string;
    readonly summary?: string;
    readonly eventType?: string;
    readonly relatedResources?: readonly string[];
    readonly additionalContext?: Readonly<Record<string, string>>;
  };
}

const CHATBOT_LIMITS = {
  title: 250,
  description: 3_500,
  nextStep: 500,
  nextSteps: 5,
  keyword: 50,
  keywords: 10,
} as const;

export interface ChatbotInput {
  readonly id: string;
  readonly threadId?: string;
  readonly eventType: string;
  readonly title: string;
  /** Text, or blocks: text blocks are Markdown-neutralised, code blocks stay verbatim (fenced). */
  readonly description: string | readonly TextBlock[];
  readonly nextSteps?: readonly string[];
  readonly keywords?: readonly string[];
  readonly relatedResources?: readonly string[];
  readonly additionalContext?: Readonly<Record<string, string>>;
}

function markdown(value: string, maxLength: number, multiline = false): string {
  return sanitizeText(value, { maxLength, multiline, markdown: true });
}

/**
 * Builds a custom notification. Every text field is sanitised here (idempotently: callers may
 * already have done so), so nothing user-controlled reaches Slack unneutralised. Code blocks keep
 * their brackets and asterisks (a pasted IAM statement must stay valid JSON) and cannot be closed
 * from inside.
 */
export function chatbotNotification(input: ChatbotInput): ChatbotNotification {
  const description =
    typeof input.description === 'string'
      ? markdown(input.description, CHATBOT_LIMITS.description, true)
      : markdownBlocks(input.description, CHATBOT_LIMITS.description);
  return {
    version: '1.0',
    source: 'custom',
    id: markdown(input.id, 128),
    content: {
      textType: 'client-markdown',
      title: markdown(input.title, CHATBOT_LIMITS.title),
      description: description === '' ? '-' : description,
      nextSteps: (input.nextSteps ?? [])
        .slice(0, CHATBOT_LIMITS.nextSteps)
        .map((step) => markdown(step, CHATBOT_LIMITS.nextStep, true)),
      keywords: (input.keywords ?? [])
        .slice(0, CHATBOT_LIMITS.keywords)
        .map((keyword) => markdown(keyword, CHATBOT_LIMITS.keyword)),
    },
    metadata: {
      ...(input.threadId ? { threadId: markdown(input.threadId, 128) } : {}),
      summary: markdown(input.title, CHATBOT_LIMITS.title),
      eventType: markdown(input.eventType, 50),
      relatedResources: (input.relatedResources ?? []).slice(0, 10).map((r) => markdown(r, 300)),
      additionalContext: Object.fromEntries(
        Object.entries(input.additionalContext ?? {}).map(([key, value]) => [
          markdown(key, 50),
          markdown(value, 300),
        ])
      ),
    },
  };
}
