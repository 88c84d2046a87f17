/**
 * A message payload as a row: `json` parses it (an object's fields are columns); `text` puts the
 * whole payload in column `raw`. Answers undefined (and why) for a payload that is not a JSON object.
 */
export function messageRow(
  payload: Uint8Array,
  dataType: 'json' | 'text',
): { row: Record<string, unknown> } | { error: string } {
  const text = new TextDecoder().decode(payload);
  if (dataType === 'text') return { row: { raw: text } };
  try {
    const v = JSON.parse(text) as unknown;
    if (typeof v !== 'object' || v === null || Array.isArray(v))
      return { error: 'the message is not a JSON object' };
    return { row: v as Record<string, unknown> };
  } catch (e) {
    return { error: `the message is not JSON: ${(e as Error).message}` };
  }
}
