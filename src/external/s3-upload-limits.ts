/**
 * The engine's `s3_*` upload limits, applied by Tributary's own uploads (bz2 objects, which the
 * engine cannot write): an object above `s3_max_single_part_upload_size` goes up in parts of
 * `s3_min_upload_part_size`, multiplied by `s3_upload_part_size_multiply_factor` every
 * `s3_upload_part_size_multiply_parts_count_threshold` parts, as the engine's own writer does.
 * Defaults are the engine's (chDB 3.4 `system.settings`).
 */
export interface UploadLimits {
  maxSinglePartUploadSize: number;
  minUploadPartSize: number;
  partSizeMultiplyFactor: number;
  partSizeMultiplyPartsCountThreshold: number;
  /** The store's (and the engine's) largest part: 5 GiB. */
  maxUploadPartSize: number;
  /** HEAD each object after its upload and compare its size. */
  checkObjectsAfterUpload: boolean;
  /** Retries of a failed write request. */
  maxUnexpectedWriteErrorRetries: number;
  /** Write requests per second (0: no limit) and the burst allowed above it (0: the rate). */
  maxPutRps: number;
  maxPutBurst: number;
}

export const ENGINE_UPLOAD_DEFAULTS: UploadLimits = {
  maxSinglePartUploadSize: 32 * 1024 * 1024,
  minUploadPartSize: 16 * 1024 * 1024,
  partSizeMultiplyFactor: 2,
  partSizeMultiplyPartsCountThreshold: 500,
  maxUploadPartSize: 5 * 1024 * 1024 * 1024,
  checkObjectsAfterUpload: false,
  maxUnexpectedWriteErrorRetries: 4,
  maxPutRps: 0,
  maxPutBurst: 0,
};

/** The upload limits among the settings of a write (the table's s3_* limits and an INSERT's). */
export function uploadLimits(settings: Readonly<Record<string, string | number | boolean>>): UploadLimits {
  const num = (name: string, fallback: number): number => {
    const v = settings[name];
    return typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : fallback;
  };
  const d = ENGINE_UPLOAD_DEFAULTS;
  const check = settings.s3_check_objects_after_upload;
  return {
    maxSinglePartUploadSize: num('s3_max_single_part_upload_size', d.maxSinglePartUploadSize),
    minUploadPartSize: Math.max(1, num('s3_min_upload_part_size', d.minUploadPartSize)),
    partSizeMultiplyFactor: Math.max(1, num('s3_upload_part_size_multiply_factor', d.partSizeMultiplyFactor)),
    partSizeMultiplyPartsCountThreshold: Math.max(
      1,
      num('s3_upload_part_size_multiply_parts_count_threshold', d.partSizeMultiplyPartsCountThreshold),
    ),
    maxUploadPartSize: d.maxUploadPartSize,
    checkObjectsAfterUpload: check === true || check === 1 || check === 'true' || check === '1',
    maxUnexpectedWriteErrorRetries: num(
      's3_max_unexpected_write_error_retries',
      d.maxUnexpectedWriteErrorRetries,
    ),
    maxPutRps: num('s3_max_put_rps', d.maxPutRps),
    maxPutBurst: num('s3_max_put_burst', d.maxPutBurst),
  };
}

/** A byte range of the file to upload, `end` exclusive. */
export interface PartRange {
  start: number;
  end: number;
}

/**
 * How an object of `size` bytes goes up: one range (a single PUT) up to
 * `maxSinglePartUploadSize`, else the ranges of its parts in order.
 */
export function uploadParts(size: number, limits: UploadLimits): PartRange[] {
  if (size <= limits.maxSinglePartUploadSize) return [{ start: 0, end: size }];
  const parts: PartRange[] = [];
  let partSize = Math.min(limits.minUploadPartSize, limits.maxUploadPartSize);
  for (let start = 0; start < size; ) {
    const end = Math.min(size, start + partSize);
    parts.push({ start, end });
    start = end;
    if (parts.length % limits.partSizeMultiplyPartsCountThreshold === 0)
      partSize = Math.min(partSize * limits.partSizeMultiplyFactor, limits.maxUploadPartSize);
  }
  return parts;
}
