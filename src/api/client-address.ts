import { isIPv6 } from 'node:net';

/**
 * The key that failed-login limits count a client under: an IPv4 address as it is (also when
 * written IPv4-mapped, `::ffff:10.0.0.1`), an IPv6 address by its /64 network, since one
 * client usually holds a whole /64 and could otherwise change address at every attempt.
 */
export function clientAddressKey(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1] as string;
  if (!isIPv6(address)) return address;
  const [head = '', tail = ''] = address.split('%')[0]?.split('::') ?? [];
  const left = head ? head.split(':') : [];
  const right = address.includes('::') && tail ? tail.split(':') : [];
  const groups = address.includes('::')
    ? [...left, ...Array(8 - left.length - right.length).fill('0'), ...right]
    : left;
  return `${groups
    .slice(0, 4)
    .map((g) => Number.parseInt(g, 16).toString(16))
    .join(':')}::/64`;
}
