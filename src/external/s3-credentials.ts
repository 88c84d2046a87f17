import { readFile } from 'node:fs/promises';
import { fromContainerMetadata, fromEnv, fromIni, fromInstanceMetadata } from '@aws-sdk/credential-providers';
import { err } from '../errors/tributary-error.ts';
import type { S3TableConfig } from './s3-table-settings.ts';

/** Keys handed to the engine for one s3 table. */
export interface S3Credentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly sessionToken?: string;
}

/** The spec's words (§4.C): role assumption is not a credential method of s3 tables. */
export const ROLE_ASSUMPTION_REFUSED =
  'role assumption as a credential method is unsupported; use environment or static credentials';

/**
 * Key names accepted in a `config_file` (key=value lines; `#` starts a comment line). The AWS
 * spellings are accepted too, so a credentials file's default section can be reused.
 */
const CONFIG_FILE_KEYS: Readonly<Record<string, keyof S3Credentials>> = {
  access_key_id: 'accessKeyId',
  aws_access_key_id: 'accessKeyId',
  secret_access_key: 'secretAccessKey',
  aws_secret_access_key: 'secretAccessKey',
  session_token: 'sessionToken',
  aws_session_token: 'sessionToken',
};

/**
 * The credentials of an s3 table, or undefined for anonymous access: static keys in the settings
 * first, then the keys of `config_file`, then (with use_environment_credentials) the AWS provider
 * chain in the spec's order. No secret is ever part of an error.
 */
export async function resolveS3Credentials(
  table: string,
  config: S3TableConfig,
): Promise<S3Credentials | undefined> {
  let found: Partial<{ -readonly [K in keyof S3Credentials]: S3Credentials[K] }> = {};
  if (config.configFile !== undefined) found = await readConfigFile(table, config.configFile);
  if (config.accessKeyId !== undefined) found.accessKeyId = config.accessKeyId;
  if (config.secretAccessKey !== undefined) found.secretAccessKey = config.secretAccessKey;
  if (found.accessKeyId !== undefined || found.secretAccessKey !== undefined) {
    if (found.accessKeyId === undefined || found.secretAccessKey === undefined)
      throw err('EXTERNAL_TABLE_CREDENTIALS', {
        table,
        detail: `${found.accessKeyId === undefined ? 'access_key_id' : 'secret_access_key'} is missing (from the settings and config_file)`,
      });
    return found as S3Credentials;
  }
  if (config.useEnvironmentCredentials) return environmentCredentials(table);
  return undefined;
}

async function readConfigFile(
  table: string,
  path: string,
): Promise<Partial<{ -readonly [K in keyof S3Credentials]: S3Credentials[K] }>> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    throw err('EXTERNAL_TABLE_CREDENTIALS', {
      table,
      detail: `config_file ${path} cannot be read (${(e as NodeJS.ErrnoException).code ?? 'error'})`,
    });
  }
  const out: Partial<{ -readonly [K in keyof S3Credentials]: S3Credentials[K] }> = {};
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line || line.startsWith('#') || line.startsWith(';') || line.startsWith('[')) continue;
    const eq = line.indexOf('=');
    if (eq < 0) continue;
    const key = CONFIG_FILE_KEYS[line.slice(0, eq).trim().toLowerCase()];
    let value = line.slice(eq + 1).trim();
    if (/^(['"]).*\1$/.test(value)) value = value.slice(1, -1);
    if (key && value) out[key] = value;
  }
  if (out.accessKeyId === undefined || out.secretAccessKey === undefined)
    throw err('EXTERNAL_TABLE_CREDENTIALS', {
      table,
      detail: `config_file ${path} must hold access_key_id=... and secret_access_key=... lines`,
    });
  return out;
}

const refuseRoleAssumption = async (): Promise<never> => {
  throw new RoleAssumptionRefused();
};

class RoleAssumptionRefused extends Error {}

/**
 * The spec's lookup order: (1) environment variables, (2) the shared config and credentials files
 * of `~/.aws`, (3) role assumption (refused), (4) container credentials, (5) the instance metadata
 * service unless AWS_EC2_METADATA_DISABLED=true.
 */
async function environmentCredentials(table: string): Promise<S3Credentials> {
  const env = process.env;
  const steps: { name: string; run: () => Promise<S3Credentials> }[] = [
    { name: 'environment variables', run: fromEnv() },
    {
      name: 'shared config files',
      run: fromIni({ roleAssumer: refuseRoleAssumption, roleAssumerWithWebIdentity: refuseRoleAssumption }),
    },
    {
      name: 'role assumption',
      run: async () => {
        if (env.AWS_ROLE_ARN || env.AWS_WEB_IDENTITY_TOKEN_FILE) throw new RoleAssumptionRefused();
        throw new Error('not configured');
      },
    },
    {
      name: 'container credentials',
      run: async () => {
        if (!env.AWS_CONTAINER_CREDENTIALS_RELATIVE_URI && !env.AWS_CONTAINER_CREDENTIALS_FULL_URI)
          throw new Error('not configured');
        return fromContainerMetadata({ timeout: 2000, maxRetries: 0 })();
      },
    },
    {
      name: 'instance metadata',
      run: async () => {
        if (env.AWS_EC2_METADATA_DISABLED?.toLowerCase() === 'true') throw new Error('disabled');
        return fromInstanceMetadata({ timeout: 1000, maxRetries: 0 })();
      },
    },
  ];
  for (const step of steps) {
    try {
      const c = await step.run();
      return {
        accessKeyId: c.accessKeyId,
        secretAccessKey: c.secretAccessKey,
        ...(c.sessionToken ? { sessionToken: c.sessionToken } : {}),
      };
    } catch (e) {
      if (e instanceof RoleAssumptionRefused)
        throw err('EXTERNAL_TABLE_CREDENTIALS', {
          table,
          detail: `${step.name}: ${ROLE_ASSUMPTION_REFUSED}`,
        });
    }
  }
  throw err('EXTERNAL_TABLE_CREDENTIALS', {
    table,
    detail:
      'use_environment_credentials is true but the provider chain found none (environment variables, ~/.aws files, container credentials, instance metadata)',
  });
}
