const formats = new Map<string, Intl.DateTimeFormat>();

/**
 * Milliseconds the wall clock of time zone `zone` is ahead of UTC at the instant `ms` (whole
 * seconds). Throws a RangeError for a zone Intl does not know.
 */
export function zoneOffsetMs(ms: number, zone: string): number {
  let f = formats.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formats.set(zone, f);
  }
  const part: Record<string, number> = {};
  for (const p of f.formatToParts(new Date(ms))) part[p.type] = Number(p.value);
  const wall = Date.UTC(
    part.year ?? 0,
    (part.month ?? 1) - 1,
    part.day ?? 0,
    part.hour ?? 0,
    part.minute ?? 0,
    part.second ?? 0,
  );
  return wall - Math.floor(ms / 1000) * 1000;
}
