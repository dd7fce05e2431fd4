import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { createAdmissionEngines } from '../../../lambda/adapters/admission/engines.js';
import type { AdmissionEngines } from '../../../lambda/core/admission/engines.js';
import { compileCrdAdmission } from '../../../lambda/core/admission/evaluate.js';
import { parseFieldPath, ruleId } from '../../../lambda/core/admission/schema-node.js';
import type {
  AdmissionVerdict,
  CrdAdmission,
  CrdDocument,
} from '../../../lambda/core/admission/types.js';

const FIXTURE = join(import.meta.dirname, '../../fixtures/crds/widgets.test.example.yaml');
const CEL_SKIPPED =
  'some validation rules were not checked because the object was invalid; correct the existing errors to complete validation';

type Json = Record<string, unknown>;

function crdOf(document: unknown): CrdDocument {
  return {
    name: 'widgets.test.example',
    document,
    origin: { kind: 'file', location: 'widgets.yaml' },
  };
}

const engines = createAdmissionEngines();
let widgets: CrdAdmission;

beforeAll(() => {
  const compiled = compileCrdAdmission(crdOf(parse(readFileSync(FIXTURE, 'utf8'))), engines);
  if ('error' in compiled) throw new Error(compiled.error);
  widgets = compiled;
});

const VALID_SPEC: Json = { terms: [{ id: 'w-1' }] };

function widget(spec: Json, extra: Json = {}): Json {
  return {
    apiVersion: 'test.example/v1',
    kind: 'Widget',
    metadata: { name: 'demo' },
    spec,
    ...extra,
  };
}

function review(spec: Json, extra: Json = {}): AdmissionVerdict {
  return widgets.review(widget({ ...VALID_SPEC, ...spec }, extra));
}

/** [path, rule, message] of each violation. */
function violations(verdict: AdmissionVerdict): [string, string, string][] {
  return verdict.violations.map((violation) => [violation.path, violation.rule, violation.message]);
}

/** The CEL rule id of the fixture's rule whose text is `rule`. */
const cel = (rule: string) => ruleId(rule);

describe('CRD admission: decoding (prune, nulls, defaults)', () => {
  it('admits a valid object, applies defaults (nested ones too) and leaves the input untouched', () => {
    const object = widget({ terms: [{ alias: 'alpha@v1' }], options: { retries: 2 } });
    const before = structuredClone(object);
    const verdict = widgets.review(object);
    expect(verdict.violations).toEqual([]);
    expect(verdict.crd).toBe('widgets.test.example from widgets.yaml');
    expect(verdict.version).toBe('v1');
    expect((verdict.defaulted as Json).spec).toEqual({
      mode: 'Fast',
      terms: [{ alias: 'alpha@v1' }],
      options: { retries: 2, endpoint: 'enabled', hops: 1 },
    });
    expect(object).toEqual(before);
  });

  it('creates a defaulted object with its own nested defaults, and no object whose parent is absent', () => {
    const defaulted = review({}).defaulted as { spec: Json };
    // options' default is {endpoint: enabled}; its hops default then applies inside it.
    expect(defaulted.spec.options).toEqual({ endpoint: 'enabled', hops: 1 });
    // disks[].ebs has no default and is not created; nor is anything under an absent kube.
    expect(defaulted.spec).not.toHaveProperty('kube');
  });

  it('prunes unknown fields and reports their paths; keeps apiVersion, kind and metadata', () => {
    const verdict = widgets.review({
      ...widget({ terms: [{ id: 'w-1', extra: 1 }], unknown: { deep: true } }),
      metadata: { name: 'demo', labels: { team: 'a' } },
      surplus: 1,
    });
    expect(verdict.pruned).toEqual(['spec.terms[0].extra', 'spec.unknown', 'surplus']);
    expect(verdict.violations).toEqual([]);
    const defaulted = verdict.defaulted as Json;
    expect(defaulted).not.toHaveProperty('surplus');
    expect(defaulted.metadata).toEqual({ name: 'demo', labels: { team: 'a' } });
    expect((defaulted.spec as Json).terms).toEqual([{ id: 'w-1' }]);
  });

  it('keeps unknown fields under x-kubernetes-preserve-unknown-fields, still validating known ones', () => {
    const verdict = review({ kube: { maxPods: -1, anything: { goes: [1] } } });
    expect(verdict.pruned).toEqual([]);
    expect(verdict.openPaths).toEqual(['spec.kube']);
    expect(((verdict.defaulted as Json).spec as Json).kube).toEqual({
      maxPods: -1,
      anything: { goes: [1] },
    });
    expect(violations(verdict)).toEqual([
      ['spec.kube.maxPods', 'minimum', 'should be greater than or equal to 0'],
    ]);
  });

  it('neither prunes nor validates the status of a version with a status subresource, and keeps it', () => {
    const verdict = review({}, { status: { phase: 'Broken', extra: 1 } });
    expect(verdict.violations).toEqual([]);
    expect(verdict.pruned).toEqual([]);
    expect((verdict.defaulted as Json).status).toEqual({ phase: 'Broken', extra: 1 });
  });

  it('drops nulls the schema does not allow, defaults them where it has a default, keeps nullable ones', () => {
    const verdict = review({ count: null, mode: null, owner: null });
    expect(verdict.violations).toEqual([]);
    const spec = (verdict.defaulted as Json).spec as Json;
    expect(spec).not.toHaveProperty('count');
    expect(spec.mode).toBe('Fast');
    expect(spec.owner).toBeNull();
  });
});

describe('CRD admission: structural schema', () => {
  const blocked: [string, string, string] = ['', 'cel-not-evaluated', CEL_SKIPPED];

  // [label, spec, violations]; a blocking error (type, enum, required, maxLength, maxItems,
  // maxProperties) makes the API server skip the CEL rules.
  const CASES: readonly [string, Json, [string, string, string][]][] = [
    [
      'enum',
      { mode: 'Medium' },
      [
        ['spec.mode', 'enum', 'Unsupported value: "Medium": supported values: "Fast", "Slow"'],
        blocked,
      ],
    ],
    ['pattern (RE2)', { label: 'ABC' }, [['spec.label', 'pattern', "should match '^[a-zé]+$'"]]],
    ['maxLength counts runes, not bytes', { label: 'éééééééé' }, []],
    [
      'maxLength',
      { label: 'ééééééééé' },
      [['spec.label', 'max-length', 'may not be longer than 8'], blocked],
    ],
    [
      'minLength',
      { label: '' },
      [
        ['spec.label', 'min-length', 'should be at least 1 chars long'],
        ['spec.label', 'pattern', "should match '^[a-zé]+$'"],
      ],
    ],
    [
      'integer is not number',
      { count: 1.5 },
      [['spec.count', 'type', 'must be of type integer: "number"'], blocked],
    ],
    ['minimum', { count: 0 }, [['spec.count', 'minimum', 'should be greater than or equal to 1']]],
    ['maximum', { count: 11 }, [['spec.count', 'maximum', 'should be less than or equal to 10']]],
    ['exclusiveMinimum', { ratio: 0 }, [['spec.ratio', 'minimum', 'should be greater than 0']]],
    ['exclusiveMaximum', { ratio: 1 }, [['spec.ratio', 'maximum', 'should be less than 1']]],
    ['number accepts an integer', { ratio: 0.5 }, []],
    ['int-or-string: integer (pattern is for strings)', { size: 5 }, []],
    ['int-or-string: string', { size: '5Gi' }, []],
    [
      'int-or-string: pattern',
      { size: '5G' },
      [['spec.size', 'pattern', "should match '^[0-9]+(Gi|Mi)$'"]],
    ],
    [
      'int-or-string: neither',
      { size: true },
      [['spec.size', 'type', 'must be of type integer,string: "boolean"'], blocked],
    ],
    ['format date-time', { createdAt: '2024-02-29T10:00:00Z' }, []],
    [
      'format date-time (invalid)',
      { createdAt: '2023-02-29T10:00:00Z' },
      [['spec.createdAt', 'format', 'must be of type date-time: "2023-02-29T10:00:00Z"'], blocked],
    ],
    [
      'maxProperties',
      { tags: { a: '1', b: '2', c: '3', d: '4' } },
      [['spec.tags', 'max-properties', 'must have at most 3 items (has 4)'], blocked],
    ],
    [
      'minItems (and `!self.all(…)` is false on an empty list, as in CEL)',
      { terms: [] },
      [
        ['spec.terms', 'min-items', 'should have at least 1 items'],
        [
          'spec.terms',
          ruleId('!self.all(x, has(x.id) && (has(x.tags) || has(x.alias)))'),
          "'id' is mutually exclusive, cannot be set with a combination of other fields in a term",
        ],
      ],
    ],
    [
      'maxItems',
      { terms: [{ id: 'w-1' }, { id: 'w-2' }, { id: 'w-3' }, { id: 'w-4' }] },
      [['spec.terms', 'max-items', 'must have at most 3 items (has 4)'], blocked],
    ],
    [
      'required in a list item',
      { disks: [{ root: true }] },
      [['spec.disks[0].device', 'required', 'Required value'], blocked],
    ],
    [
      'list-type set',
      { labels: ['a', 'b', 'a'] },
      [['spec.labels[2]', 'duplicate', 'Duplicate value: "a"']],
    ],
    [
      'list-type map',
      {
        entries: [
          { name: 'x', weight: 1 },
          { name: 'x', weight: 2 },
        ],
      },
      [['spec.entries[1]', 'duplicate', 'Duplicate value: {"name":"x"}']],
    ],
    ['allOf / oneOf / not satisfied', { mix: { text: 'any', number: 1 } }, []],
    [
      'allOf (and oneOf: both alternatives pass without text)',
      { mix: { number: 1 } },
      [
        ['spec.mix.text', 'required', 'Required value'],
        ['spec.mix', 'one-of', 'must validate one and only one schema (oneOf)'],
        blocked,
      ],
    ],
    [
      'oneOf: both alternatives',
      { mix: { text: 'only', number: 1 } },
      [['spec.mix', 'one-of', 'must validate one and only one schema (oneOf)']],
    ],
    [
      'not',
      { mix: { text: 'any', number: 100 } },
      [['spec.mix', 'not', 'must not validate the schema (not)']],
    ],
  ];

  it.each(CASES)('%s', (_label, spec, expected) => {
    expect(violations(review(spec))).toEqual(expected);
  });

  it('requires required fields', () => {
    const verdict = widgets.review(widget({}));
    expect(violations(verdict)).toEqual([['spec.terms', 'required', 'Required value'], blocked]);
  });

  it('validates metadata.name as a DNS subdomain (not blocking) and requires a name', () => {
    const named = widgets.review({ ...widget(VALID_SPEC), metadata: { name: 'Bad_Name' } });
    expect(violations(named)).toEqual([
      [
        'metadata.name',
        'metadata-name',
        expect.stringMatching(/^Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain/),
      ],
    ]);
    const unnamed = widgets.review({ ...widget(VALID_SPEC), metadata: {} });
    expect(violations(unnamed)).toEqual([
      ['metadata.name', 'metadata-name', 'Required value: name or generateName is required'],
      blocked,
    ]);
    expect(
      widgets.review({ ...widget(VALID_SPEC), metadata: { generateName: 'w-' } }).violations
    ).toEqual([]);
  });
});

describe('CRD admission: x-kubernetes-validations (CEL)', () => {
  const CASES: readonly [string, Json, [string, string, string][]][] = [
    [
      'list all() with has()',
      { terms: [{ tags: { a: 'b' } }] },
      [
        [
          'spec.terms',
          cel('self.all(x, has(x.id) || has(x.alias))'),
          "expected at least one, got none, ['id', 'alias']",
        ],
      ],
    ],
    [
      'exists() and size()',
      { terms: [{ alias: 'alpha@v1' }, { id: 'w-1' }] },
      [
        [
          'spec.terms',
          cel('!(self.exists(x, has(x.alias)) && self.size() != 1)'),
          "'alias' is mutually exclusive, cannot be set with a combination of other terms",
        ],
      ],
    ],
    [
      '!all() over every term',
      { terms: [{ id: 'w-1', tags: { a: 'b' } }] },
      [
        [
          'spec.terms',
          cel('!self.all(x, has(x.id) && (has(x.tags) || has(x.alias)))'),
          "'id' is mutually exclusive, cannot be set with a combination of other fields in a term",
        ],
      ],
    ],
    [
      'matches() and split()',
      { terms: [{ alias: 'gamma' }] },
      [
        [
          'spec.terms[0].alias',
          cel("self.matches('^[a-zA-Z0-9]+@.+$')"),
          "'alias' is improperly formatted, must match the format 'family@version'",
        ],
        [
          'spec.terms[0].alias',
          cel("self.split('@')[0] in ['alpha','beta']"),
          "family is not supported, must be one of the following: 'alpha', 'beta'",
        ],
      ],
    ],
    [
      'find() in a ternary',
      { terms: [{ alias: 'beta@v2' }] },
      [
        [
          'spec.terms[0].alias',
          cel("self.find('^[^@]+') == 'beta' ? self.split('@')[1] == 'latest' : true"),
          "beta may only specify version 'latest'",
        ],
      ],
    ],
    ['find() passes', { terms: [{ alias: 'beta@latest' }] }, []],
    [
      'map keys and self[k]',
      { tags: { a: '', 'reserved/x': 'y' } },
      [
        [
          'spec.tags',
          cel("self.all(k, k != '' && self[k] != '')"),
          "empty tag keys or values aren't supported",
        ],
        [
          'spec.tags',
          cel("self.all(k, !k.startsWith('reserved/'))"),
          'tag contains a reserved key',
        ],
      ],
    ],
    [
      'filter() with a ternary, map() and isSorted(), nested filter()',
      { disks: [{ device: 'b', root: true }, { device: 'a', root: true }, { device: 'a' }] },
      [
        [
          'spec.disks',
          cel('self.filter(x, has(x.root)?x.root==true:false).size() <= 1'),
          'must have only one root disk',
        ],
        [
          'spec.disks',
          cel(
            'self.map(x, x.device).isSorted() && self.all(x, self.filter(y, y.device == x.device).size() == 1)'
          ),
          'devices must be unique and sorted',
        ],
      ],
    ],
    [
      'has() on an object without the fields',
      { disks: [{ device: 'a', ebs: {} }] },
      [
        [
          'spec.disks[0].ebs',
          cel('has(self.snapshot) || has(self.sizeGiB)'),
          'snapshot or sizeGiB must be defined',
        ],
      ],
    ],
    [
      'in on a map, integer comparison, map key iteration, startsWith()',
      { kube: { soft: { mem: '1' }, high: 1, low: 2, reserved: { gpu: '-1' } } },
      [
        [
          'spec.kube',
          cel('has(self.soft) ? self.soft.all(e, (e in self.softGrace)) : true'),
          expect.stringMatching(
            /^no such key: softGrace evaluating rule: soft entries need a grace period$/
          ),
        ],
        [
          'spec.kube',
          cel('has(self.high) && has(self.low) ?  self.high > self.low  : true'),
          'high must be greater than low',
        ],
        [
          'spec.kube.reserved',
          cel("self.all(x, x=='cpu' || x=='memory')"),
          "valid keys for reserved are ['cpu','memory']",
        ],
        [
          'spec.kube.reserved',
          cel("self.all(x, !self[x].startsWith('-'))"),
          'reserved values cannot be negative',
        ],
      ],
    ],
    [
      'int() of a value that is not a number is an evaluation error (Go strconv)',
      { requirements: [{ key: 'a', operator: 'Gt', values: [''] }] },
      [
        [
          'spec.requirements',
          cel(
            "self.all(x, (x.operator == 'Gt' || x.operator == 'Lt') ? (x.values.size() == 1 && int(x.values[0]) >= 0) : true)"
          ),
          "strconv.ParseInt: parsing \"\": invalid syntax evaluating rule: requirements operator 'Gt' or 'Lt' must have a single positive integer value",
        ],
      ],
    ],
    ['int() of a number', { requirements: [{ key: 'a', operator: 'Gt', values: ['4'] }] }, []],
    [
      'size() on lists, minValues',
      { requirements: [{ key: 'a', operator: 'In', values: [], minValues: 1 }] },
      [
        [
          'spec.requirements',
          cel("self.all(x, x.operator == 'In' ? x.values.size() != 0 : true)"),
          "requirements with operator 'In' must have a value defined",
        ],
        [
          'spec.requirements',
          cel(
            "self.all(x, (x.operator == 'In' && has(x.minValues)) ? x.values.size() >= x.minValues : true)"
          ),
          "requirements with 'minValues' must have at least that many values specified in the 'values' field",
        ],
      ],
    ],
    [
      'find() with a group and endsWith()',
      { requirements: [{ key: 'test.example/size', operator: 'Exists' }] },
      [
        [
          'spec.requirements[0].operator',
          'enum',
          'Unsupported value: "Exists": supported values: "In", "NotIn", "Gt", "Lt"',
        ],
        ['', 'cel-not-evaluated', CEL_SKIPPED],
      ],
    ],
    [
      'restricted label domain',
      {
        requirements: [
          { key: 'test.example/size', operator: 'In', values: ['a'] },
          { key: 'test.example/zone', operator: 'In', values: ['a'] },
        ],
      },
      [
        [
          'spec.requirements[0].key',
          cel('self in ["test.example/zone"] || !self.find("^([^/]+)").endsWith("test.example")'),
          'label domain "test.example" is restricted',
        ],
      ],
    ],
    [
      'messageExpression, and the default message of a rule without one',
      { ref: { group: 'g', name: '' } },
      [['spec.ref.name', cel("self != ''"), "failed rule: self != ''"]],
    ],
    [
      'messageExpression',
      { ref: { group: 'g', name: 'elevenchars' } },
      [
        [
          'spec.ref',
          cel('self.name.size() <= 10'),
          'name elevenchars is longer than 10 characters',
        ],
      ],
    ],
    [
      'fieldPath',
      { secondary: 'b' },
      [
        [
          'spec.secondary',
          cel('has(self.primary) || !has(self.secondary)'),
          'secondary needs primary',
        ],
      ],
    ],
    [
      'size() and in on an int-or-string map',
      { replicas: 1, limits: { cpu: 1, nodes: '2' } },
      [
        [
          'spec',
          cel(
            "!has(self.replicas) || (!has(self.limits) || size(self.limits) == 0 || (size(self.limits) == 1 && 'nodes' in self.limits))"
          ),
          "replicas cannot be combined with limits other than 'nodes'",
        ],
      ],
    ],
    ['limits with only nodes', { replicas: 1, limits: { nodes: 2 } }, []],
    [
      'has() == has()',
      { schedule: { cron: '@daily', policy: 'Never' } },
      [
        [
          'spec.schedule',
          cel('has(self.cron) == has(self.window)'),
          "'cron' must be set with 'window'",
        ],
        [
          'spec.schedule',
          cel("self.policy == 'Never' ? !has(self.cron) : true"),
          "failed rule: self.policy == 'Never' ? !has(self.cron) : true",
        ],
      ],
    ],
    [
      'a defaulted field read by a rule',
      { mode: 'Slow', count: 6 },
      [
        [
          'spec',
          cel("self.mode == 'Slow' ? (!has(self.count) || self.count <= 5) : true"),
          'a Slow widget counts at most 5',
        ],
      ],
    ],
    [
      'rule on a string',
      { label: 'none' },
      [['spec.label', cel("self != 'none'"), "label cannot be 'none'"]],
    ],
  ];

  it.each(CASES)('%s', (_label, spec, expected) => {
    expect(violations(review(spec))).toEqual(expected);
  });

  it('evaluates root rules with metadata.name', () => {
    const verdict = widgets.review({ ...widget(VALID_SPEC), metadata: { name: 'forbidden-1' } });
    expect(violations(verdict)).toEqual([
      [
        '',
        cel("!self.metadata.name.startsWith('forbidden')"),
        'name must not start with "forbidden"',
      ],
    ]);
  });

  it('skips transition rules (oldSelf) and counts those that apply to the object', () => {
    expect(review({}).skippedTransitionRules).toBe(1);
    expect(review({ ref: { group: 'g', name: 'n' } }).skippedTransitionRules).toBe(2);
    // Counted even when a blocking error skips every rule.
    expect(review({ mode: 'Medium', ref: { group: 'g', name: 'n' } }).skippedTransitionRules).toBe(
      2
    );
  });
});

describe('CRD admission: versions', () => {
  it('evaluates the served version the object asks for', () => {
    const verdict = widgets.review({
      ...widget({ anything: 1 }),
      apiVersion: 'test.example/v1beta1',
    });
    expect(verdict.version).toBe('v1beta1');
    expect(verdict.violations).toEqual([]);
    expect(verdict.openPaths).toEqual(['spec']);
    expect(verdict.pruned).toEqual([]);
  });

  it('rejects an unserved version, naming the served ones', () => {
    const verdict = widgets.review({ ...widget(VALID_SPEC), apiVersion: 'test.example/v1alpha1' });
    expect(verdict.version).toBe('v1alpha1');
    expect(violations(verdict)).toEqual([
      [
        'apiVersion',
        'version-not-served',
        'no matches for kind "Widget" in version "test.example/v1alpha1": served versions: "v1beta1", "v1"',
      ],
    ]);
  });

  it('rejects another group, another kind and a non-object', () => {
    expect(
      violations(widgets.review({ ...widget(VALID_SPEC), apiVersion: 'other.example/v1' }))
    ).toEqual([
      [
        'apiVersion',
        'api-version',
        '"other.example/v1" is not a version of test.example: served versions: "v1beta1", "v1"',
      ],
    ]);
    expect(violations(widgets.review({ ...widget(VALID_SPEC), kind: 'Gadget' }))).toEqual([
      ['kind', 'kind', 'Unsupported value: "Gadget": supported values: "Widget"'],
    ]);
    expect(violations(widgets.review('text'))).toEqual([
      ['', 'type', 'must be of type object: "string"'],
    ]);
  });
});

describe('CRD admission: compiling', () => {
  function tinyCrd(spec: Json): unknown {
    return {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'widgets.test.example' },
      spec: {
        group: 'test.example',
        names: { kind: 'Widget' },
        scope: 'Cluster',
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: { openAPIV3Schema: { type: 'object', properties: { spec } } },
          },
        ],
      },
    };
  }

  function compileTiny(spec: Json, with_ = engines) {
    return compileCrdAdmission(crdOf(tinyCrd(spec)), with_);
  }

  it('compiles each pattern and rule once per CRD, not per object', () => {
    let compiles = 0;
    const counting: AdmissionEngines = {
      regex: {
        compile: (pattern) => {
          compiles += 1;
          return engines.regex.compile(pattern);
        },
      },
      cel: {
        ...engines.cel,
        compile: (text) => {
          compiles += 1;
          return engines.cel.compile(text);
        },
      },
    };
    const admission = compileTiny(
      {
        type: 'object',
        properties: { a: { type: 'string', pattern: '^a$' } },
        'x-kubernetes-validations': [{ rule: "self.a != 'b'" }],
      },
      counting
    );
    if ('error' in admission) throw new Error(admission.error);
    for (const a of ['a', 'b', 'c']) admission.review(widget({ a }));
    expect(compiles).toBe(2);
  });

  it('reads fields whose names CEL must escape', () => {
    const admission = compileTiny({
      type: 'object',
      properties: { 'x-y': { type: 'string' }, namespace: { type: 'string' } },
      'x-kubernetes-validations': [
        { rule: 'self.x__dash__y == self.__namespace__', message: 'must match' },
      ],
    });
    if ('error' in admission) throw new Error(admission.error);
    expect(admission.review(widget({ 'x-y': 'a', namespace: 'a' })).violations).toEqual([]);
    expect(violations(admission.review(widget({ 'x-y': 'a', namespace: 'b' })))).toEqual([
      ['spec', cel('self.x__dash__y == self.__namespace__'), 'must match'],
    ]);
  });

  it('reports an absent field read without has() as an evaluation error', () => {
    const admission = compileTiny({
      type: 'object',
      properties: { a: { type: 'string' } },
      'x-kubernetes-validations': [{ rule: "self.a == 'x'" }],
    });
    if ('error' in admission) throw new Error(admission.error);
    expect(violations(admission.review(widget({})))).toEqual([
      ['spec', cel("self.a == 'x'"), "no such key: a evaluating rule: self.a == 'x'"],
    ]);
  });

  it('binds date-time strings as timestamps', () => {
    const admission = compileTiny({
      type: 'object',
      properties: { at: { type: 'string', format: 'date-time' } },
      'x-kubernetes-validations': [
        { rule: "self.at < timestamp('2025-01-01T00:00:00Z')", message: 'too late' },
      ],
    });
    if ('error' in admission) throw new Error(admission.error);
    expect(admission.review(widget({ at: '2024-06-01T00:00:00Z' })).violations).toEqual([]);
    expect(admission.review(widget({ at: '2026-06-01T00:00:00Z' })).violations).toHaveLength(1);
  });

  it.each([
    [
      'a rule that does not parse',
      { type: 'object', 'x-kubernetes-validations': [{ rule: 'self.a +' }] },
      /rule "self\.a \+": syntax error/,
    ],
    [
      'an unknown function',
      { type: 'object', 'x-kubernetes-validations': [{ rule: 'self.quantity() > 1' }] },
      /undeclared reference to 'quantity'/,
    ],
    ['a pattern Go cannot compile', { type: 'string', pattern: '(?<=a)b' }, /pattern "\(\?<=a\)b"/],
    [
      'a fieldPath that is not one',
      { type: 'object', 'x-kubernetes-validations': [{ rule: 'true', fieldPath: 'a b' }] },
      /fieldPath "a b" is not a field path/,
    ],
  ])('refuses a CRD with %s', (_label, spec, message) => {
    const result = compileTiny(spec);
    expect('error' in result && result.error).toMatch(message);
  });

  it('refuses a document that is not an apiextensions.k8s.io/v1 CRD', () => {
    const result = compileCrdAdmission(
      crdOf({
        apiVersion: 'apiextensions.k8s.io/v1beta1',
        kind: 'CustomResourceDefinition',
        spec: {},
      }),
      engines
    );
    expect('error' in result && result.error).toMatch(
      /^widgets\.test\.example: not a usable CRD: apiVersion: must be apiextensions\.k8s\.io\/v1/
    );
  });

  it('gives CEL rules ids that change only with the rule text', () => {
    expect(ruleId("self != ''")).toBe(ruleId("self != ''"));
    expect(ruleId("self != ''")).toMatch(/^cel-[0-9a-f]{8}$/);
    expect(ruleId("self != ''")).not.toBe(ruleId("self != ' '"));
  });

  it('parses fieldPath', () => {
    expect(parseFieldPath(".spec.a['b.c']")).toEqual(['spec', 'a', 'b.c']);
    expect(parseFieldPath('spec')).toBeUndefined();
  });
});
