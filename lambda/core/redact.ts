// Secret scrubbing for everything that leaves the scanner (reports, SNS bodies, progress lines).
// A server or proxy may echo the request's `Authorization` header, and error texts may quote
// credentials: anything shaped like an EKS token, an AWS secret key or an STS session token is
// replaced. Every pattern is linear (no nested quantifiers, anchored starts): redaction runs on
// untrusted text of any length.
import type { Check } from './check.js';
import type { Evaluation } from './evaluate.js';
import { materialHash } from './material.js';
import type { Finding } from './model.js';

export const REDACTED = '[redacted]';

/** `k8s-aws-v1.` + base64url of a presigned STS URL (what `aws eks get-token` prints). */
const EKS_TOKEN = /k8s-aws-v1\.[A-Za-z0-9_=-]*/g;
/** `Bearer <opaque token>`: whatever the token's format, it is a credential. */
const BEARER = /(?<![A-Za-z0-9_-])(Bearer\s+)[A-Za-z0-9._~+/=-]{20,}/gi;
/**
 * STS session tokens: base64 of a protobuf whose first bytes are fixed (`FwoGZXIvYXdz…`,
 * `IQoJb3JpZ2lu…` and older prefixes), possibly URL-encoded.
 */
const SESSION_TOKEN =
  /(?<![A-Za-z0-9/+%])(?:FwoGZXIvYXdz|FQoGZXIvYXdz|IQoJb3JpZ2lu|AgoJb3JpZ2lu|AQoJb3JpZ2lu|AQoDYXdz)(?:[A-Za-z0-9/+=]|%[0-9A-Fa-f]{2}){20,}/g;
/** Presigned-URL parameters that authenticate the request (the decoded form of an EKS token). */
const SIGNED_QUERY = /(X-Amz-(?:Signature|Security-Token)=)[^&\s"'<>]+/gi;
/** `name = value`, `name: value`, `"name": "value"`; the name decides (see `redactKeyed`). */
const KEYED_VALUE =
  /(?<![A-Za-z0-9_-])([A-Za-z0-9_-]+)(["']?[ \t]*[:=][ \t]*["']?)([A-Za-z0-9/+=_.%-]+)/g;

/** Names whose value is a credential whatever it looks like. */
const CREDENTIAL_NAME = /secret[_-]?access[_-]?key|session[_-]?token|security[_-]?token/i;
/** Names under which a 40-character base64 value is taken for an AWS secret access key. */
const SECRETISH_NAME = /secret|passw|credential|token|key/i;
const SECRET_KEY_SHAPE = /^[A-Za-z0-9/+]{40}$/;
/** 40 hex digits is a SHA-1 (commit, digest), never a random base64 secret key. */
const HEX = /^[0-9a-f]+$/i;

function looksLikeSecretKey(value: string): boolean {
  return SECRET_KEY_SHAPE.test(value) && !HEX.test(value);
}

/** Whether `value` stored under `name` is a secret (for `key: value` pairs and object fields). */
function isSecretValue(name: string, value: string): boolean {
  if (value === '' || value === REDACTED) return false;
  if (CREDENTIAL_NAME.test(name)) return true;
  return SECRETISH_NAME.test(name) && looksLikeSecretKey(value);
}

/**
 * Text every pattern above needs (case-insensitive, so a superset): text without any of it holds
 * nothing to redact, and one linear test of it spares the five replacements on almost every string.
 */
const MAY_HOLD_SECRET =
  /k8s-aws-v1\.|bearer|x-amz-|secret|passw|credential|token|key|FwoGZXIvYXdz|FQoGZXIvYXdz|IQoJb3JpZ2lu|AgoJb3JpZ2lu|AQoJb3JpZ2lu|AQoDYXdz/i;

/** `text` with every secret-looking part replaced by `[redacted]`. */
export function redactSecrets(text: string): string {
  if (!MAY_HOLD_SECRET.test(text)) return text;
  return text
    .replace(EKS_TOKEN, REDACTED)
    .replace(BEARER, `$1${REDACTED}`)
    .replace(SESSION_TOKEN, REDACTED)
    .replace(SIGNED_QUERY, `$1${REDACTED}`)
    .replace(KEYED_VALUE, (match, name: string, separator: string, value: string) =>
      isSecretValue(name, value) ? `${name}${separator}${REDACTED}` : match
    );
}

/** Deeper than any evidence a check builds; beyond it (or in a cycle) values are dropped. */
const MAX_DEPTH = 64;

/**
 * `value` with every string (and object key) redacted, recursively. Returns the same reference
 * when nothing needed redacting, so callers can tell whether anything changed.
 */
export function redactDeep(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return redactSecrets(value);
  if (value === null || typeof value !== 'object') return value;
  if (depth >= MAX_DEPTH) return REDACTED;
  if (Array.isArray(value)) {
    let changed = false;
    const items = value.map((item: unknown) => {
      const next = redactDeep(item, depth + 1);
      if (next !== item) changed = true;
      return next;
    });
    return changed ? items : value;
  }
  let changed = false;
  const entries = Object.entries(value).map(([key, item]): [string, unknown] => {
    const nextKey = redactSecrets(key);
    const next =
      typeof item === 'string' && isSecretValue(key, item) ? REDACTED : redactDeep(item, depth + 1);
    if (nextKey !== key || next !== item) changed = true;
    return [nextKey, next];
  });
  // fromEntries defines own properties: a `__proto__` key stays data.
  return changed ? Object.fromEntries(entries) : value;
}

/** The finding with its message, remediation and evidence scrubbed (same reference if clean). */
export function redactFinding(
  finding: Finding,
  redactRemediation: (text: string) => string = redactSecrets
): Finding {
  const message = redactSecrets(finding.message);
  const remediation = redactRemediation(finding.remediation);
  const evidence = redactDeep(finding.evidence) as Finding['evidence'];
  if (
    message === finding.message &&
    remediation === finding.remediation &&
    evidence === finding.evidence
  ) {
    return finding;
  }
  return { ...finding, message, remediation, evidence };
}

const MAX_REMEMBERED_REMEDIATIONS = 1024;

/**
 * Every finding of an evaluation scrubbed. A finding whose evidence changed gets its material hash
 * recomputed from the scrubbed evidence, so a rotating token never makes a finding "changed".
 */
export function redactEvaluation(evaluation: Evaluation, checks: readonly Check[]): Evaluation {
  const materialOf = new Map(checks.map((check) => [check.id, check.material]));
  // Most findings of a check share its remediation text: each text is scrubbed once (up to a
  // bound, as drafted remediations may each differ).
  const remediations = new Map<string, string>();
  const redactRemediation = (text: string): string => {
    const known = remediations.get(text);
    if (known !== undefined) return known;
    const clean = redactSecrets(text);
    if (remediations.size < MAX_REMEMBERED_REMEDIATIONS) remediations.set(text, clean);
    return clean;
  };
  let changed = false;
  const findings = evaluation.findings.map((finding) => {
    const clean = redactFinding(finding, redactRemediation);
    if (clean === finding) return finding;
    changed = true;
    if (clean.evidence === finding.evidence) return clean;
    return { ...clean, materialHash: materialHash(clean, materialOf.get(clean.checkId) ?? []) };
  });
  return changed ? { ...evaluation, findings } : evaluation;
}
