// AWS wire formats for the emulator, driven by the SDK's own operation schemas: the Query/EC2
// request bodies the clients send are read back into SDK input shapes, and outputs are written in
// the XML or JSON the clients parse. Using the schemas (names, xmlName/ec2QueryName traits, list
// flattening) keeps the emulator honest about what a real response looks like.
import * as ec2 from '@aws-sdk/client-ec2';
import * as eks from '@aws-sdk/client-eks';
import * as iam from '@aws-sdk/client-iam';
import * as kms from '@aws-sdk/client-kms';
import * as sns from '@aws-sdk/client-sns';
import * as sqs from '@aws-sdk/client-sqs';
import * as ssm from '@aws-sdk/client-ssm';
import * as sts from '@aws-sdk/client-sts';
import { NormalizedSchema } from '@smithy/core/schema';

export type QueryService = 'ec2' | 'iam' | 'sns' | 'sts';
export type JsonService = 'ssm' | 'sqs' | 'kms';
type SchemaModule = Record<string, unknown>;

const MODULES: Record<QueryService | JsonService | 'eks', SchemaModule> = {
  ec2,
  eks,
  iam,
  kms,
  sns,
  sqs,
  ssm,
  sts,
};

/** `[input, output]` schemas of one operation (`DescribeImages` → `DescribeImages$`). */
export function operationSchemas(
  service: keyof typeof MODULES,
  action: string
): { readonly input: NormalizedSchema; readonly output: NormalizedSchema } {
  const operation = MODULES[service][`${action}$`];
  if (!Array.isArray(operation) || operation[0] !== 9) {
    throw new Error(`emulator: ${service} has no operation ${action}`);
  }
  const [, , , , input, output] = operation as [
    unknown,
    unknown,
    unknown,
    unknown,
    unknown,
    unknown,
  ];
  return {
    input: NormalizedSchema.of(input as never),
    output: NormalizedSchema.of(output as never),
  };
}

function scalar(schema: NormalizedSchema, text: string): unknown {
  if (schema.isBooleanSchema()) return text === 'true';
  if (schema.isNumericSchema()) return Number(text);
  if (schema.isTimestampSchema()) return new Date(text);
  return text;
}

/** Reads an x-www-form-urlencoded Query (or EC2 Query) request into the SDK input shape. */
export function readQuery(
  schema: NormalizedSchema,
  form: URLSearchParams,
  ec2Style: boolean,
  prefix = ''
): unknown {
  const present = (key: string) =>
    form.has(key) || [...form.keys()].some((name) => name.startsWith(`${key}.`));
  if (schema.isStructSchema()) {
    const value: Record<string, unknown> = {};
    for (const [name, member] of schema.structIterator()) {
      const traits = member.getMergedTraits();
      const base = (traits.xmlName as string | undefined) ?? name;
      const key =
        ec2Style && traits.ec2QueryName
          ? String(traits.ec2QueryName)
          : ec2Style
            ? base[0]?.toUpperCase() + base.slice(1)
            : base;
      const full = prefix ? `${prefix}.${key}` : key;
      if (present(full)) value[name] = readQuery(member, form, ec2Style, full);
    }
    return value;
  }
  if (schema.isListSchema()) {
    const item = schema.getValueSchema();
    const traits = item.getMergedTraits();
    const flat = ec2Style || schema.getMergedTraits().xmlFlattened === 1;
    const itemPrefix = flat
      ? `${prefix}.`
      : `${prefix}.${(traits.xmlName as string | undefined) ?? 'member'}.`;
    const values: unknown[] = [];
    for (let index = 1; present(`${itemPrefix}${index}`); index++) {
      values.push(readQuery(item, form, ec2Style, `${itemPrefix}${index}`));
    }
    return values;
  }
  if (schema.isMapSchema()) {
    const keyName = (schema.getKeySchema().getMergedTraits().xmlName as string) ?? 'key';
    const valueSchema = schema.getValueSchema();
    const valueName = (valueSchema.getMergedTraits().xmlName as string) ?? 'value';
    const flat = schema.getMergedTraits().xmlFlattened === 1;
    const entry = flat ? `${prefix}.` : `${prefix}.entry.`;
    const map: Record<string, unknown> = {};
    for (let index = 1; form.has(`${entry}${index}.${keyName}`); index++) {
      const key = form.get(`${entry}${index}.${keyName}`) ?? '';
      map[key] = readQuery(valueSchema, form, ec2Style, `${entry}${index}.${valueName}`);
    }
    return map;
  }
  const text = form.get(prefix);
  return text === null ? undefined : scalar(schema, text);
}

const escapeXml = (text: string) =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

function scalarText(value: unknown): string {
  if (value instanceof Date) return value.toISOString();
  return String(value);
}

/** The XML the SDK's XML deserializer reads back into `value` (members, lists, maps). */
function writeXml(schema: NormalizedSchema, value: unknown): string {
  if (value === undefined || value === null) return '';
  if (schema.isStructSchema()) {
    let out = '';
    const record = value as Record<string, unknown>;
    for (const [name, member] of schema.structIterator()) {
      const memberValue = record[name];
      if (memberValue === undefined || memberValue === null) continue;
      const key = (member.getMemberTraits().xmlName as string | undefined) ?? name;
      if (member.isListSchema() && member.getMergedTraits().xmlFlattened === 1) {
        for (const item of memberValue as unknown[]) {
          out += `<${key}>${writeXml(member.getValueSchema(), item)}</${key}>`;
        }
      } else {
        out += `<${key}>${writeXml(member, memberValue)}</${key}>`;
      }
    }
    return out;
  }
  if (schema.isListSchema()) {
    const item = schema.getValueSchema();
    const tag = (item.getMergedTraits().xmlName as string | undefined) ?? 'member';
    return (value as unknown[])
      .map((entry) => `<${tag}>${writeXml(item, entry)}</${tag}>`)
      .join('');
  }
  if (schema.isMapSchema()) {
    const keyName = (schema.getKeySchema().getMergedTraits().xmlName as string) ?? 'key';
    const valueSchema = schema.getValueSchema();
    const valueName = (valueSchema.getMergedTraits().xmlName as string) ?? 'value';
    return Object.entries(value as Record<string, unknown>)
      .map(
        ([key, entry]) =>
          `<entry><${keyName}>${escapeXml(key)}</${keyName}><${valueName}>${writeXml(valueSchema, entry)}</${valueName}></entry>`
      )
      .join('');
  }
  return escapeXml(scalarText(value));
}

/** A successful Query response: EC2's flat `<XResponse>` or the `<XResult>` wrapper of IAM/SNS/STS. */
export function queryResponse(service: QueryService, action: string, output: unknown): string {
  const body = writeXml(operationSchemas(service, action).output, output);
  if (service === 'ec2') {
    return `<${action}Response xmlns="http://ec2.amazonaws.com/doc/2016-11-15/"><requestId>emulated</requestId>${body}</${action}Response>`;
  }
  return `<${action}Response><${action}Result>${body}</${action}Result><ResponseMetadata><RequestId>emulated</RequestId></ResponseMetadata></${action}Response>`;
}

export function queryError(service: QueryService, code: string, message: string): string {
  if (service === 'ec2') {
    return `<Response><Errors><Error><Code>${code}</Code><Message>${escapeXml(message)}</Message></Error></Errors><RequestID>emulated</RequestID></Response>`;
  }
  return `<ErrorResponse><Error><Type>Sender</Type><Code>${code}</Code><Message>${escapeXml(message)}</Message></Error><RequestId>emulated</RequestId></ErrorResponse>`;
}

/** JSON output with timestamps as epoch seconds (awsJson and restJson default). */
export function toJson(schema: NormalizedSchema, value: unknown): unknown {
  if (value === undefined || value === null) return value;
  if (schema.isTimestampSchema()) {
    const date = value instanceof Date ? value : new Date(String(value));
    return date.getTime() / 1000;
  }
  if (schema.isStructSchema()) {
    const out: Record<string, unknown> = {};
    for (const [name, member] of schema.structIterator()) {
      const item = (value as Record<string, unknown>)[name];
      if (item !== undefined) out[name] = toJson(member, item);
    }
    return out;
  }
  if (schema.isListSchema()) {
    return (value as unknown[]).map((item) => toJson(schema.getValueSchema(), item));
  }
  if (schema.isMapSchema()) {
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>).map(([key, item]) => [
        key,
        toJson(schema.getValueSchema(), item),
      ])
    );
  }
  return value;
}
