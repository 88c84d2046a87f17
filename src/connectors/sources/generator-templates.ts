/**
 * The templates of the `stream_generator` source: each makes one event (a JSON object) at a time,
 * with the fields Timeplus's templates of the same name carry. The target stream takes the fields
 * it has columns for (ingest ignores none: a stream for a template needs its columns, see
 * docs/api.md "Sources").
 */
export type GeneratorTemplate = 'iot' | 'user_logins' | 'devops';

export const GENERATOR_TEMPLATES: readonly GeneratorTemplate[] = ['iot', 'user_logins', 'devops'];

const pick = <T>(xs: readonly T[]): T => xs[Math.floor(Math.random() * xs.length)] as T;
const round = (x: number, digits: number) => Math.round(x * 10 ** digits) / 10 ** digits;

const CITIES = ['Vancouver', 'Toronto', 'Shanghai', 'Berlin', 'London', 'Sydney', 'Austin', 'Tokyo'];
const BROWSERS = ['chrome', 'firefox', 'safari', 'edge'];
const REGIONS = ['us-west-1', 'us-east-1', 'eu-central-1', 'ap-southeast-1'];

/** The columns a stream needs for a template: name and Proton type. */
export const TEMPLATE_COLUMNS: Readonly<Record<GeneratorTemplate, readonly [string, string][]>> = {
  iot: [
    ['device', 'string'],
    ['number', 'int32'],
    ['temperature', 'float64'],
    ['humidity', 'float64'],
    ['location', 'string'],
  ],
  user_logins: [
    ['user_id', 'string'],
    ['ip', 'string'],
    ['browser', 'string'],
    ['city', 'string'],
    ['success', 'bool'],
  ],
  devops: [
    ['hostname', 'string'],
    ['region', 'string'],
    ['cpu_usage', 'float64'],
    ['memory_usage', 'float64'],
    ['disk_usage', 'float64'],
  ],
};

/** One event of the template. */
export function templateEvent(template: GeneratorTemplate): Record<string, unknown> {
  switch (template) {
    case 'iot':
      return {
        device: `device_${Math.floor(Math.random() * 10)}`,
        number: Math.floor(Math.random() * 100),
        temperature: round(15 + Math.random() * 20, 2),
        humidity: round(20 + Math.random() * 60, 2),
        location: pick(CITIES),
      };
    case 'user_logins':
      return {
        user_id: `user_${Math.floor(Math.random() * 1000)}`,
        ip: `10.${Math.floor(Math.random() * 256)}.${Math.floor(Math.random() * 256)}.${Math.floor(Math.random() * 256)}`,
        browser: pick(BROWSERS),
        city: pick(CITIES),
        success: Math.random() > 0.1,
      };
    case 'devops':
      return {
        hostname: `host_${Math.floor(Math.random() * 20)}`,
        region: pick(REGIONS),
        cpu_usage: round(Math.random() * 100, 2),
        memory_usage: round(Math.random() * 100, 2),
        disk_usage: round(Math.random() * 100, 2),
      };
  }
}
