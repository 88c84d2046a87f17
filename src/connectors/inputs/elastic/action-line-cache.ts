import { type BulkAction, type BulkActionUnreadable, readActionLine } from './bulk-action-line.ts';

/**
 * Reads action lines without JSON.parse when they repeat. Shippers write the same action line for
 * every document (`{"create":{"_index":"logs"}}`), or the same line with only `_id` changing
 * (`{"index":{"_index":"logs","_id":"..."}}`). The first is matched whole; for the second the
 * text around the `_id` value is kept as a template, and a line that has the same text before and
 * after a plain string value (no quote, no backslash) is the same action with that id.
 * Anything else goes through `readActionLine`.
 */
export class ActionLineCache {
  private lastText: string | undefined;
  private lastAction: BulkAction | undefined;
  private prefix: string | undefined;
  private suffix = '';
  private templateAction: BulkAction | undefined;

  read(text: string, lineNo: number): BulkAction | BulkActionUnreadable {
    if (text === this.lastText) return this.lastAction!;
    const prefix = this.prefix;
    if (
      prefix !== undefined &&
      text.length > prefix.length + this.suffix.length &&
      text.startsWith(prefix) &&
      text.endsWith(this.suffix)
    ) {
      const id = text.slice(prefix.length, text.length - this.suffix.length);
      if (id.length <= 128 && id.indexOf('"') < 0 && id.indexOf('\\') < 0)
        return { ...this.templateAction!, id };
    }
    const action = readActionLine(text, lineNo);
    if (action.op === undefined || action.error !== undefined) return action;
    this.lastText = text;
    this.lastAction = action;
    if (action.id !== undefined) this.learnTemplate(text, action);
    return action;
  }

  private learnTemplate(text: string, action: BulkAction): void {
    const id = action.id!;
    if (id.indexOf('"') >= 0 || id.indexOf('\\') >= 0) return;
    const marker = `"_id":"${id}"`;
    const at = text.indexOf(marker);
    // The top-level `_id` must be the only `"_id"` of the line (no nested or duplicate key).
    if (at < 0 || text.indexOf('"_id"') !== at || text.indexOf('"_id"', at + 1) >= 0) return;
    this.prefix = text.slice(0, at + 7);
    this.suffix = text.slice(at + marker.length - 1);
    this.templateAction = action;
  }
}
