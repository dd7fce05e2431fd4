import { describe, expect, it } from 'vitest';
import {
  ASFF_LIMITS,
  ASFF_MAX_FINDING_BYTES,
  type AsffSubject,
  asffFindingId,
  asffSizeBytes,
  complianceOf,
  DEFAULT_REMEDIATION_URL,
  defaultProductArn,
  isAsffExported,
  suppressionNote,
  toAsffFinding,
  truncate,
} from '../../lambda/core/asff.js';
import { findingId, type ResourceRef } from '../../lambda/core/model.js';
import { AsffFindingSchema } from '../cli/support/asff-schema.js';

const target = { account: '123456789012', region: 'eu-west-1', partition: 'aws' };
const times = {
  firstObservedAt: '2026-11-01T10:00:00.000Z',
  lastObservedAt: '2026-11-02T10:00:00.000Z',
  updatedAt: '2026-11-02T10:00:00.000Z',
};
const nodeClass: ResourceRef = { cluster: 'prod', kind: 'EC2NodeClass', name: 'default' };

function subject(overrides: Partial<AsffSubject> = {}): AsffSubject {
  const resource = overrides.resource ?? nodeClass;
  return {
    id: findingId('subnets-resolve', resource),
    checkId: 'subnets-resolve',
    severity: 'high',
    status: 'fail',
    resource,
    message: 'No subnet matches the selector terms.',
    remediation: 'Tag the subnets.',
    ...overrides,
  };
}

describe('toAsffFinding', () => {
  it('writes every required attribute in its documented format', () => {
    const finding = toAsffFinding(subject(), { target, times });
    expect(AsffFindingSchema.safeParse(finding).error?.issues ?? []).toEqual([]);
    expect(finding).toMatchObject({
      SchemaVersion: '2018-10-08',
      ProductArn: 'arn:aws:securityhub:eu-west-1:123456789012:product/123456789012/default',
      GeneratorId: 'nodeclass-scanner/subnets-resolve',
      AwsAccountId: '123456789012',
      CreatedAt: times.firstObservedAt,
      FirstObservedAt: times.firstObservedAt,
      UpdatedAt: times.updatedAt,
      Severity: { Label: 'HIGH', Original: 'high' },
      Compliance: { Status: 'FAILED' },
      RecordState: 'ACTIVE',
    });
  });

  it('derives the Id from the finding id and region, never from the text', () => {
    const first = toAsffFinding(subject(), { target, times });
    const reworded = toAsffFinding(subject({ message: 'Reworded.', severity: 'critical' }), {
      target,
      times: { ...times, updatedAt: '2026-11-03T00:00:00.000Z' },
    });
    expect(reworded.Id).toBe(first.Id);
    expect(first.Id).toBe(`nodeclass-scanner/eu-west-1/${subject().id}`);
    const otherRegion = toAsffFinding(subject(), {
      target: { ...target, region: 'us-east-1' },
      times,
    });
    expect(otherRegion.Id).not.toBe(first.Id);
  });

  it('tells apart same-named clusters of two regions imported in one (the service)', () => {
    // The service imports in its home region; the cluster's region names its resources.
    const home = toAsffFinding(subject(), {
      target: { ...target, resourceRegion: 'eu-west-1' },
      times,
    });
    const west = toAsffFinding(subject(), {
      target: { ...target, resourceRegion: 'us-west-2' },
      times,
    });
    expect(home.Id).toBe(`nodeclass-scanner/eu-west-1/${subject().id}`);
    expect(west.Id).toBe(`nodeclass-scanner/us-west-2/${subject().id}`);
    expect([home.Region, west.Region]).toEqual(['eu-west-1', 'eu-west-1']);
    expect(west.Resources.map((resource) => [resource.Id, resource.Region])).toEqual([
      ['arn:aws:eks:us-west-2:123456789012:cluster/prod/ec2nodeclass/default', 'us-west-2'],
      ['arn:aws:eks:us-west-2:123456789012:cluster/prod', 'us-west-2'],
    ]);
    // As in the alerts: the home region's cluster by name, the other as name@region.
    expect(home.Title).toBe('subnets-resolve: prod/EC2NodeClass/default');
    expect(west.Title).toBe('subnets-resolve: prod@us-west-2/EC2NodeClass/default');
  });

  it('names the EKS cluster and the NodeClass as resources, with details', () => {
    const finding = toAsffFinding(subject(), { target, times });
    expect(finding.Resources).toEqual([
      {
        Type: 'Other',
        Id: 'arn:aws:eks:eu-west-1:123456789012:cluster/prod/ec2nodeclass/default',
        Partition: 'aws',
        Region: 'eu-west-1',
        Details: { Other: { kind: 'EC2NodeClass', name: 'default', cluster: 'prod' } },
      },
      {
        Type: 'AwsEksCluster',
        Id: 'arn:aws:eks:eu-west-1:123456789012:cluster/prod',
        Partition: 'aws',
        Region: 'eu-west-1',
        Details: {
          AwsEksCluster: { Name: 'prod', Arn: 'arn:aws:eks:eu-west-1:123456789012:cluster/prod' },
        },
      },
    ]);
  });

  it('names a manifest object without a cluster by kind, name and origin', () => {
    const resource: ResourceRef = {
      cluster: '',
      kind: 'NodePool',
      name: 'default',
      origin: { file: 'pools.yaml', document: 1 },
    };
    const finding = toAsffFinding(subject({ resource }), { target, times });
    expect(finding.Resources).toEqual([
      expect.objectContaining({
        Type: 'Other',
        Id: 'nodepool/default@pools.yaml#2',
        Details: { Other: { kind: 'NodePool', name: 'default', origin: 'pools.yaml#2' } },
      }),
    ]);
    expect(finding.ProductFields['nodeclass-scanner/origin']).toBe('pools.yaml#2');
  });

  it('names the scan itself for a cluster-level finding of a manifest scan (ASFF needs a resource)', () => {
    const resource: ResourceRef = { cluster: '', kind: 'Cluster', name: 'manifests' };
    const finding = toAsffFinding(subject({ resource }), { target, times });
    expect(AsffFindingSchema.safeParse(finding).error?.issues ?? []).toEqual([]);
    expect(finding.Resources).toEqual([
      {
        Type: 'Other',
        Id: 'cluster/manifests',
        Partition: 'aws',
        Region: 'eu-west-1',
        Details: { Other: { kind: 'Cluster', name: 'manifests' } },
      },
    ]);
  });

  it('uses the GovCloud and China partitions in ARNs, and leaves out partitions ASFF does not list', () => {
    const gov = toAsffFinding(subject(), {
      target: { account: '123456789012', region: 'us-gov-west-1', partition: 'aws-us-gov' },
      times,
    });
    expect(gov.ProductArn).toMatch(/^arn:aws-us-gov:securityhub:us-gov-west-1:/);
    expect(gov.Resources[0]?.Partition).toBe('aws-us-gov');
    const iso = toAsffFinding(subject(), {
      target: { account: '123456789012', region: 'us-iso-east-1', partition: 'aws-iso' },
      times,
    });
    expect(iso.Resources[0]).not.toHaveProperty('Partition');
  });

  it('maps statuses as documented', () => {
    expect(complianceOf({ status: 'fail' })).toEqual({ status: 'FAILED', recordState: 'ACTIVE' });
    expect(complianceOf({ status: 'error' })).toEqual({
      status: 'NOT_AVAILABLE',
      recordState: 'ACTIVE',
    });
    expect(complianceOf({ status: 'pass' })).toEqual({ status: 'PASSED', recordState: 'ARCHIVED' });
    expect(complianceOf({ status: 'suppressed' })).toEqual({
      status: 'WARNING',
      recordState: 'ARCHIVED',
    });
    expect(complianceOf({ status: 'error', causedBy: 'root' })).toEqual({
      status: 'NOT_AVAILABLE',
      recordState: 'ARCHIVED',
    });
    expect(isAsffExported({ status: 'not-applicable' })).toBe(false);
    expect(isAsffExported({ status: 'pass' })).toBe(true);
  });

  it('exports a notice as PASSED, ARCHIVED and INFORMATIONAL: it informs, nothing failed', () => {
    // Act
    const finding = toAsffFinding(
      subject({
        checkId: 'karpenter-version-supported',
        status: 'notice',
        severity: 'info',
        resource: { cluster: 'prod', kind: 'Cluster', name: 'prod' },
        message: 'Expected, not an error: validation dry-runs succeed as HTTP 412 DryRunOperation.',
      }),
      { target, times }
    );
    // Assess
    expect(isAsffExported({ status: 'notice' })).toBe(true);
    expect(complianceOf({ status: 'notice' })).toEqual({
      status: 'PASSED',
      recordState: 'ARCHIVED',
    });
    expect(AsffFindingSchema.safeParse(finding).error?.issues ?? []).toEqual([]);
    expect(finding.Compliance).toEqual({ Status: 'PASSED' });
    expect(finding.RecordState).toBe('ARCHIVED');
    expect(finding.Severity).toEqual({ Label: 'INFORMATIONAL', Original: 'info' });
    expect(finding.ProductFields['nodeclass-scanner/status']).toBe('notice');
    expect(finding.Description).toContain('HTTP 412 DryRunOperation');
  });

  it('shows a passed finding as informational, keeping the check severity as Original', () => {
    const finding = toAsffFinding(subject({ status: 'pass', severity: 'critical' }), {
      target,
      times,
    });
    expect(finding.Severity).toEqual({ Label: 'INFORMATIONAL', Original: 'critical' });
  });

  it('carries the suppression reason in ProductFields', () => {
    const finding = toAsffFinding(
      subject({
        status: 'suppressed',
        suppression: { reason: 'accepted until Q1', source: 'config', status: 'fail' },
      }),
      { target, times }
    );
    expect(finding.Compliance.Status).toBe('WARNING');
    expect(finding.ProductFields).toMatchObject({
      'nodeclass-scanner/suppressionReason': 'accepted until Q1',
      'nodeclass-scanner/suppressionSource': 'config',
      'nodeclass-scanner/suppressedStatus': 'fail',
    });
    expect(finding.ProductFields).not.toHaveProperty('nodeclass-scanner/suppressionExpires');
  });

  it('carries an annotation suppression with its expiry, and notes it for the SUPPRESSED workflow', () => {
    // Prepare
    const suppressed = subject({
      status: 'suppressed',
      suppression: {
        reason: 'GPU AMI needs IMDSv1',
        source: 'annotation',
        status: 'fail',
        expires: '2026-12-31',
      },
    });
    // Act
    const finding = toAsffFinding(suppressed, { target, times });
    // Assess
    expect(finding).toMatchObject({ Compliance: { Status: 'WARNING' }, RecordState: 'ARCHIVED' });
    expect(finding.ProductFields).toMatchObject({
      'nodeclass-scanner/suppressionSource': 'annotation',
      'nodeclass-scanner/suppressionExpires': '2026-12-31',
    });
    expect(suppressionNote(suppressed)).toBe(
      'Suppressed by annotation ignore-check.nodeclass-scanner/subnets-resolve on the object until 2026-12-31: GPU AMI needs IMDSv1'
    );
    expect(
      suppressionNote({
        ...suppressed,
        suppression: { reason: 'x'.repeat(2_000), source: 'config', status: 'error' },
      })
    ).toHaveLength(512);
  });

  it('links the first public reference of the check, or Karpenter’s NodeClass documentation', () => {
    const check = {
      title: 'Subnets resolve',
      remediation: 'Tag them.',
      references: ['notes', '#7544'],
    };
    expect(toAsffFinding(subject(), { target, times, check }).Remediation.Recommendation).toEqual({
      Text: 'Tag the subnets.',
      Url: 'https://github.com/aws/karpenter-provider-aws/issues/7544',
    });
    expect(
      toAsffFinding(subject(), { target, times, check: { ...check, references: [] } }).Remediation
        .Recommendation.Url
    ).toBe(DEFAULT_REMEDIATION_URL);
  });

  it('keeps every field within its limit however long the inputs are', () => {
    const long = 'x'.repeat(300_000);
    const finding = toAsffFinding(
      subject({
        message: long,
        remediation: long,
        resource: { cluster: 'c'.repeat(100), kind: 'EC2NodeClass', name: long },
        suppression: { reason: long, source: 'annotation', status: 'fail' },
      }),
      { target, times, check: { title: long, remediation: long, references: [] } }
    );
    expect(AsffFindingSchema.safeParse(finding).error?.issues ?? []).toEqual([]);
    expect(finding.Title.length).toBeLessThanOrEqual(ASFF_LIMITS.title);
    expect(finding.Description.endsWith('…')).toBe(true);
    expect(asffSizeBytes(finding)).toBeLessThanOrEqual(ASFF_MAX_FINDING_BYTES);
    expect(asffSizeBytes(finding)).toBeLessThan(32 * 1024);
  });

  it('overrides the status mapping for a resolved finding', () => {
    const finding = toAsffFinding(subject(), {
      target,
      times,
      compliance: { status: 'PASSED', recordState: 'ARCHIVED' },
    });
    expect(finding).toMatchObject({ Compliance: { Status: 'PASSED' }, RecordState: 'ARCHIVED' });
  });
});

describe('helpers', () => {
  it('builds the default product ARN and finding id', () => {
    expect(defaultProductArn(target)).toBe(
      'arn:aws:securityhub:eu-west-1:123456789012:product/123456789012/default'
    );
    expect(asffFindingId('abc', target)).toBe('nodeclass-scanner/eu-west-1/abc');
  });

  it('truncates by code points and marks the cut', () => {
    expect(truncate('abc', 3)).toBe('abc');
    expect(truncate('abcd', 3)).toBe('ab…');
    expect([...truncate('😀'.repeat(10), 4)]).toHaveLength(4);
  });
});
