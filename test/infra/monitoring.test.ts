// The dashboard as CloudWatch receives it: the DashboardBody of the synthesized template, parsed.
import { Duration } from 'aws-cdk-lib';
import type { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { FAILING_RESOURCES_QUERY } from '../../infra/constructs/monitoring.js';
import { metricSearch } from '../../infra/constructs/scanner-metrics.js';
import { SEVERITIES } from '../../lambda/core/model.js';
import { FINDING_STATE_LOG_MESSAGE, METRIC_NAMES } from '../../lambda/shared/telemetry.js';
import { buildApp, FULL_CONTEXT, logicalIdOf, resourcesOf } from './support.js';

interface Widget {
  readonly type: 'metric' | 'log' | 'text' | 'alarm';
  readonly width: number;
  readonly properties: {
    readonly title?: string;
    readonly view?: string;
    readonly stacked?: boolean;
    readonly query?: string;
    readonly metrics?: readonly unknown[][];
  };
}

const TOKEN = '«token»';

/**
 * The dashboard's widgets. The body is an `Fn::Join` of JSON text and CloudFormation tokens (the
 * region, log group names); each token becomes `«Ref:LogicalId»` so the text parses.
 */
function dashboardWidgets(template: Template): Widget[] {
  const [dashboard] = Object.values(resourcesOf(template, 'AWS::CloudWatch::Dashboard'));
  const body = dashboard?.Properties?.DashboardBody as { 'Fn::Join': [string, unknown[]] };
  const text = body['Fn::Join'][1]
    .map((part) => {
      if (typeof part === 'string') return part;
      const ref = (part as { Ref?: string }).Ref;
      return ref === undefined ? TOKEN : `«Ref:${ref}»`;
    })
    .join('');
  return (JSON.parse(text) as { widgets: Widget[] }).widgets;
}

/** Every expression (Metrics Insights query, SEARCH, math) of a metric widget. */
function expressionsOf(widget: Widget): string[] {
  return (widget.properties.metrics ?? []).flatMap((row) =>
    row.flatMap((item) =>
      typeof item === 'object' && item !== null && 'expression' in item
        ? [String((item as { expression: unknown }).expression)]
        : []
    )
  );
}

const byTitle = (widgets: Widget[], title: string) => {
  const found = widgets.find((widget) => widget.properties.title === title);
  if (found === undefined) throw new Error(`no widget titled ${title}`);
  return found;
};

// Per-cluster series (`metricsDetail` cluster); the account-wide default has its own tests below.
const built = buildApp({ ...FULL_CONTEXT, scheduleMinutes: 30, metricsDetail: 'cluster' });
const widgets = dashboardWidgets(built.template);
const SCHEDULE_SECONDS = 1800;
const accountWide = buildApp({ ...FULL_CONTEXT, scheduleMinutes: 30 });
const accountWidgets = dashboardWidgets(accountWide.template);

/** Each alarm's metric query or metric name, by alarm name: what it watches. */
function alarmsWatching(template: Template): Record<string, string> {
  return Object.fromEntries(
    Object.values(resourcesOf(template, 'AWS::CloudWatch::Alarm')).map((alarm) => {
      const props = alarm.Properties as {
        AlarmName: string;
        MetricName?: string;
        Metrics?: { Expression?: string; MetricStat?: { Metric: { MetricName: string } } }[];
      };
      const watched =
        props.MetricName ??
        (props.Metrics ?? [])
          .map((m) => m.Expression ?? m.MetricStat?.Metric.MetricName ?? '')
          .join(' ');
      return [props.AlarmName, watched];
    })
  );
}

describe('dashboard: open findings', () => {
  it('totals each severity across clusters: the latest gauge of each cluster, summed', () => {
    // Act
    const totals = byTitle(widgets, 'Open findings by severity (all clusters)');
    // Assess
    expect(totals.properties.stacked).toBe(true);
    expect(expressionsOf(totals)).toEqual(
      SEVERITIES.map(
        (severity) =>
          `SUM(SEARCH('{NodeClassScanner,Cluster,Severity,service} MetricName="OpenFindings" ` +
          `Severity="${severity}"', 'Maximum', ${SCHEDULE_SECONDS}))`
      )
    );
    // The old MAX across clusters showed the worst cluster, not the total.
    expect(JSON.stringify(totals)).not.toContain('SELECT MAX(OpenFindings)');
  });

  it('keeps the per-cluster view', () => {
    expect(expressionsOf(byTitle(widgets, 'Open findings by cluster and severity'))).toEqual([
      'SELECT MAX(OpenFindings) FROM NodeClassScanner GROUP BY Cluster, Severity',
    ]);
  });
});

describe('dashboard: failing NodeClasses table', () => {
  const table = byTitle(widgets, 'Failing NodeClasses and NodePools (latest scan of each cluster)');

  it('is a Logs Insights table over the three scanning Lambdas’ log groups', () => {
    // Prepare
    const logGroup = (fragment: string) =>
      `SOURCE '«Ref:${logicalIdOf(built.template, 'AWS::Logs::LogGroup', fragment)}»'`;
    // Assess
    expect(table).toMatchObject({ type: 'log', width: 24, properties: { view: 'table' } });
    const query = table.properties.query ?? '';
    for (const handler of ['ScanClusterLogs', 'AmiEventLogs', 'IamEventLogs']) {
      expect(query).toContain(logGroup(handler));
    }
    expect(query).not.toContain(logGroup('DispatchLogs'));
  });

  it('keeps the latest state of each finding and shows the open ones, most severe first', () => {
    const query = table.properties.query ?? '';
    expect(query.slice(query.indexOf('filter')).split('\n| ')).toEqual([
      ...FAILING_RESOURCES_QUERY,
    ]);
    expect(FAILING_RESOURCES_QUERY).toEqual([
      `filter message = "${FINDING_STATE_LOG_MESSAGE}"`,
      expect.stringMatching(
        /^stats latest\(state\) as current, .* by cluster, kind, name, checkId$/
      ),
      'filter current = "open"',
      'sort rank asc',
      'limit 1000',
    ]);
  });
});

describe('dashboard: per-cluster scan duration and AWS calls', () => {
  it('draws the slowest scan of each cluster', () => {
    expect(expressionsOf(byTitle(widgets, 'Scan duration by cluster (ms)'))).toEqual([
      'SELECT MAX(ScanDuration) FROM NodeClassScanner GROUP BY Cluster',
    ]);
  });

  it('draws the AWS calls of each cluster, apart from the calls no cluster made', () => {
    // Act
    const perCluster = byTitle(widgets, 'AWS API calls by cluster');
    // Assess: the exact schema leaves out the remainder written without a Cluster dimension.
    expect(expressionsOf(perCluster)).toEqual([
      `SEARCH('{NodeClassScanner,Cluster,service} MetricName="AwsApiCalls"', 'Sum', ${SCHEDULE_SECONDS})`,
    ]);
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a CloudWatch dynamic label
    expect(JSON.stringify(perCluster)).toContain("${PROP('Dim.Cluster')}");
    expect(expressionsOf(byTitle(widgets, 'AWS API calls (all)'))).toEqual([
      'SELECT SUM(AwsApiCalls) FROM NodeClassScanner',
    ]);
  });
});

describe('dashboard: every graph can be drawn', () => {
  it('holds at most one Metrics Insights query per graph (one per GetMetricData request)', () => {
    const graphs = widgets.filter((widget) => widget.type === 'metric');
    expect(graphs.length).toBeGreaterThan(8);
    for (const graph of graphs) {
      const insights = expressionsOf(graph).filter((expression) => /^SELECT /.test(expression));
      expect(insights.length, graph.properties.title).toBeLessThanOrEqual(1);
    }
  });

  it('names only metrics the Lambdas emit, in their namespace', () => {
    const expressions = widgets.flatMap(expressionsOf);
    const named = expressions.flatMap((expression) => [
      ...[...expression.matchAll(/SELECT [A-Z]+\((\w+)\) FROM (\w+)/g)].map((m) => [m[1], m[2]]),
      ...[...expression.matchAll(/\{(\w+),[^}]*\} MetricName="(\w+)"/g)].map((m) => [m[2], m[1]]),
    ]);
    expect(named.length).toBeGreaterThan(10);
    for (const [name, namespace] of named) {
      expect(METRIC_NAMES).toContain(name);
      expect(namespace).toBe('NodeClassScanner');
    }
  });

  it('fits a 24-unit grid, row by row', () => {
    let row = 0;
    for (const widget of widgets) {
      row = row + widget.width > 24 ? widget.width : row + widget.width;
      expect(widget.width).toBeLessThanOrEqual(24);
    }
    expect(row).toBe(24);
  });
});

describe('metricsDetail account (the default): alarms and dashboard without a Cluster dimension', () => {
  it('keeps every alarm, watching the same metrics as per-cluster series do', () => {
    // Metrics Insights and service-level metrics span every dimension set: the same alarms hold.
    expect(alarmsWatching(accountWide.template)).toEqual(alarmsWatching(built.template));
    expect(
      Object.values(alarmsWatching(accountWide.template)).filter((watched) =>
        /\bCluster\b/.test(watched)
      )
    ).toEqual([]);
  });

  it('draws each severity’s one series (its MAX: the worst cluster), not a per-cluster search', () => {
    // Act
    const bySeverity = byTitle(accountWidgets, 'Open findings by severity (worst cluster)');
    // Assess
    expect(expressionsOf(bySeverity)).toEqual(
      SEVERITIES.map(
        (severity) =>
          `SEARCH('{NodeClassScanner,Severity,service} MetricName="OpenFindings" ` +
          `Severity="${severity}"', 'Maximum', ${SCHEDULE_SECONDS})`
      )
    );
  });

  it('groups nothing by Cluster and searches no Cluster dimension', () => {
    // Prepare
    const expressions = accountWidgets.flatMap(expressionsOf);
    // Assess
    expect(expressions.length).toBeGreaterThan(8);
    expect(expressions.filter((expression) => /\bCluster\b/.test(expression))).toEqual([]);
    expect(expressionsOf(byTitle(accountWidgets, 'Scan duration, slowest cluster (ms)'))).toEqual([
      'SELECT MAX(ScanDuration) FROM NodeClassScanner',
    ]);
    expect(JSON.stringify(byTitle(accountWidgets, 'AWS API calls'))).toContain('"AwsApiCalls"');
    // The failing-resources table (Logs Insights) still names each cluster.
    expect(
      byTitle(accountWidgets, 'Failing NodeClasses and NodePools (latest scan of each cluster)')
    ).toMatchObject({ type: 'log' });
  });

  it('fits a 24-unit grid with at most one Metrics Insights query per graph', () => {
    let row = 0;
    for (const widget of accountWidgets) {
      row = row + widget.width > 24 ? widget.width : row + widget.width;
      const insights = expressionsOf(widget).filter((expression) => /^SELECT /.test(expression));
      expect(insights.length, widget.properties.title).toBeLessThanOrEqual(1);
    }
    expect(row).toBe(24);
  });
});

describe('metricSearch', () => {
  const period = Duration.minutes(5);

  it('matches the exact dimension set, with Powertools’ service dimension', () => {
    const search = metricSearch('SourceErrors', {
      label: 'x',
      period,
      statistic: 'Sum',
      dimensions: ['Cluster'],
      total: true,
    });
    expect(search.expression).toBe(
      `SUM(SEARCH('{NodeClassScanner,Cluster,service} MetricName="SourceErrors"', 'Sum', 300))`
    );
  });

  it('refuses filters outside the dimension set, quotes in values, and unknown metrics', () => {
    const base = { label: 'x', period, statistic: 'Sum' as const, dimensions: ['Cluster'] };
    expect(() => metricSearch('SourceErrors', { ...base, where: { Severity: 'high' } })).toThrow(
      /not in the dimension set/
    );
    expect(() => metricSearch('SourceErrors', { ...base, where: { Cluster: `a"b` } })).toThrow(
      /unsupported SEARCH/
    );
    expect(() => metricSearch('ClusterScans' as 'SourceErrors', base)).toThrow(/not one of/);
  });
});
