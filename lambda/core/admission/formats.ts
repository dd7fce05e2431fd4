// String formats and object names as the API server checks them for a custom resource; shared by
// the CRD engine (validate.ts, evaluate.ts) and the built-in rules (crd-rules.ts), so both decide
// alike. Of the formats Kubernetes knows, the ones a CRD is likely to use are checked (date-time,
// date, uuid, byte, ipv4, ipv6, cidr, mac); the rest pass:
// https://github.com/kubernetes/kube-openapi/blob/master/pkg/validation/strfmt/default.go

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:?\d{2})?$/;
const UUID = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;
const MAC = /^[0-9a-f]{2}([:-])[0-9a-f]{2}(\1[0-9a-f]{2}){4}$/i;

function validDate(year: string, month: string, day: string): boolean {
  const y = Number(year);
  const m = Number(month);
  const d = Number(day);
  if (m < 1 || m > 12 || d < 1) return false;
  const leap = (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
  const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][m - 1] ?? 0;
  return d <= days;
}

function validIpv6(text: string): boolean {
  if (!/^[0-9a-fA-F:.]+$/.test(text) || text.split('::').length > 2) return false;
  const withV4 = text.includes('.');
  if (withV4 && !IPV4.test(text.slice(text.lastIndexOf(':') + 1))) return false;
  const groups = (withV4 ? text.slice(0, text.lastIndexOf(':')) : text)
    .split(':')
    .filter((group, index, all) => group !== '' || (index > 0 && index < all.length - 1));
  const size = groups.filter((group) => group !== '').length + (withV4 ? 2 : 0);
  if (!groups.every((group) => group === '' || /^[0-9a-fA-F]{1,4}$/.test(group))) return false;
  return text.includes('::') ? size < 8 : size === 8;
}

/** Whether a string has the format; unknown formats pass (Kubernetes ignores them). */
export function matchesFormat(format: string, text: string): boolean {
  switch (format) {
    case 'date': {
      const match = DATE.exec(text);
      return match !== null && validDate(match[1] ?? '', match[2] ?? '', match[3] ?? '');
    }
    case 'date-time':
    case 'datetime': {
      const match = DATE_TIME.exec(text);
      return (
        match !== null &&
        validDate(match[1] ?? '', match[2] ?? '', match[3] ?? '') &&
        Number(match[4]) < 24 &&
        Number(match[5]) < 60 &&
        Number(match[6]) < 60
      );
    }
    case 'uuid':
    case 'uuid3':
    case 'uuid4':
    case 'uuid5':
      return UUID.test(text);
    case 'byte':
      return BASE64.test(text);
    case 'ipv4':
      return IPV4.test(text);
    case 'ipv6':
      return validIpv6(text);
    case 'cidr': {
      const [address = '', bits, ...rest] = text.split('/');
      if (bits === undefined || rest.length > 0 || !/^\d{1,3}$/.test(bits)) return false;
      if (IPV4.test(address)) return Number(bits) <= 32;
      return validIpv6(address) && Number(bits) <= 128;
    }
    case 'mac':
      return MAC.test(text);
    default:
      return true;
  }
}

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS_SUBDOMAIN_MESSAGE =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

/**
 * Why the API server refuses `metadata.name` of a custom resource (a DNS-1123 subdomain of at most
 * 253 characters), in its wording; undefined when the name is valid.
 */
export function objectNameProblem(name: string): string | undefined {
  const problems = [
    ...(name.length > 253 ? ['must be no more than 253 characters'] : []),
    ...(DNS_SUBDOMAIN.test(name) ? [] : [DNS_SUBDOMAIN_MESSAGE]),
  ];
  return problems.length === 0
    ? undefined
    : `Invalid value: ${JSON.stringify(name)}: ${problems.join('; ')}`;
}
