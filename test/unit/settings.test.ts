/**
 * Settings (lib/settings.ts): documented defaults, loud failures on bad values, and the parsing of
 * PDF_ALLOW_PRIVATE_HOSTS. Every test restores process.env.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { availableParallelism } from 'node:os';
import { settings } from '#lib/settings.ts';

const VARIABLES = [
  'RENDER_TIMEOUT_MS',
  'MAX_BODY_BYTES',
  'PRESIGNED_URL_TTL_SECONDS',
  'PDF_ALLOW_PRIVATE_HOSTS',
  'TABLE_NAME',
  'IDEMPOTENCY_TABLE_NAME',
  'BUCKET_NAME',
  'LINK_SIGNING_SECRET',
  'PUBLIC_BASE_URL',
  'CHROME_PATH',
  'RENDER_CONCURRENCY',
  'MAX_QUEUED_RENDERS',
  'MAX_QUEUE_WAIT_MS',
] as const;

let saved: NodeJS.ProcessEnv;

beforeEach(() => {
  saved = { ...process.env };
  for (const name of VARIABLES) delete process.env[name];
});

afterEach(() => {
  for (const name of Object.keys(process.env)) if (!(name in saved)) delete process.env[name];
  Object.assign(process.env, saved);
});

describe('defaults', () => {
  it('renders for at most 20 seconds', () => {
    // Act
    const timeout = settings.renderTimeoutMs;

    // Assess
    expect(timeout).toBe(20_000);
  });

  it('accepts request bodies up to 5 MB', () => {
    // Act
    const maxBody = settings.maxBodyBytes;

    // Assess
    expect(maxBody).toBe(5 * 1024 * 1024);
  });

  it('presigns S3 URLs for one minute', () => {
    // Act
    const ttl = settings.presignedUrlTtlSeconds;

    // Assess
    expect(ttl).toBe(60);
  });

  it('allows no private hosts', () => {
    // Act
    const hosts = settings.allowPrivateHosts;

    // Assess
    expect([...hosts]).toEqual([]);
  });

  it('has no public base URL or Chrome path', () => {
    // Act
    const base = settings.publicBaseUrl;
    const chrome = settings.chromePath;

    // Assess
    expect(base).toBeUndefined();
    expect(chrome).toBeUndefined();
  });

  it('treats an empty value as unset', () => {
    // Prepare
    process.env.RENDER_TIMEOUT_MS = '';
    process.env.PUBLIC_BASE_URL = '';

    // Act
    const timeout = settings.renderTimeoutMs;
    const base = settings.publicBaseUrl;

    // Assess
    expect(timeout).toBe(20_000);
    expect(base).toBeUndefined();
  });
});

describe('integer settings', () => {
  it('reads a value set after import (settings are read lazily)', () => {
    // Prepare
    process.env.RENDER_TIMEOUT_MS = '45000';
    process.env.MAX_BODY_BYTES = '1048576';

    // Act
    const timeout = settings.renderTimeoutMs;
    const maxBody = settings.maxBodyBytes;

    // Assess
    expect(timeout).toBe(45_000);
    expect(maxBody).toBe(1_048_576);
  });

  it.each(['abc', '20s', '1.5', '0', '-100', 'NaN', 'Infinity'])(
    'refuses RENDER_TIMEOUT_MS=%j with a message naming the setting and the value',
    (raw) => {
      // Prepare
      process.env.RENDER_TIMEOUT_MS = raw;

      // Act
      const read = () => settings.renderTimeoutMs;

      // Assess
      expect(read).toThrow(`Setting RENDER_TIMEOUT_MS must be an integer >= 1, got "${raw}"`);
    },
  );

  it('refuses a bad MAX_BODY_BYTES instead of silently using the default', () => {
    // Prepare
    process.env.MAX_BODY_BYTES = '5MB';

    // Act
    const read = () => settings.maxBodyBytes;

    // Assess
    expect(read).toThrow(/MAX_BODY_BYTES/);
  });
});

describe('render capacity', () => {
  it('renders two documents per core at once (at least two), queues 100 and lets one wait 5 s by default', () => {
    // Act
    const slots = settings.renderConcurrency;
    const queued = settings.maxQueuedRenders;
    const waitMs = settings.maxQueueWaitMs;

    // Assess
    expect(slots).toBe(Math.max(2, availableParallelism() * 2));
    expect(queued).toBe(100);
    expect(waitMs).toBe(5_000);
  });

  it('reads each from its variable, allows an empty queue, and refuses nonsense', () => {
    // Prepare
    process.env.RENDER_CONCURRENCY = '3';
    process.env.MAX_QUEUED_RENDERS = '0';
    process.env.MAX_QUEUE_WAIT_MS = '250';

    // Act
    const read = { slots: settings.renderConcurrency, queued: settings.maxQueuedRenders, waitMs: settings.maxQueueWaitMs };
    process.env.RENDER_CONCURRENCY = '0';

    // Assess
    expect(read).toEqual({ slots: 3, queued: 0, waitMs: 250 });
    expect(() => settings.renderConcurrency).toThrow(/RENDER_CONCURRENCY/);
  });
});

describe('required settings', () => {
  it.each([
    ['TABLE_NAME', () => settings.tableName],
    ['IDEMPOTENCY_TABLE_NAME', () => settings.idempotencyTableName],
    ['BUCKET_NAME', () => settings.bucketName],
    ['LINK_SIGNING_SECRET', () => settings.linkSigningSecret],
  ])('%s throws a message naming it when unset', (name, read) => {
    // Act / Assess
    expect(read).toThrow(`Setting ${name} is required`);
  });

  it('reads a required setting when it is set', () => {
    // Prepare
    process.env.TABLE_NAME = 'pdf-api-table';

    // Act
    const table = settings.tableName;

    // Assess
    expect(table).toBe('pdf-api-table');
  });
});

describe('PDF_ALLOW_PRIVATE_HOSTS', () => {
  it('splits on commas, trims, lower-cases and drops empty entries', () => {
    // Prepare
    process.env.PDF_ALLOW_PRIVATE_HOSTS = ' LocalHost:3000 ,, 127.0.0.1:8080,Intranet.Example:443 , ';

    // Act
    const hosts = settings.allowPrivateHosts;

    // Assess
    expect([...hosts].sort()).toEqual(['127.0.0.1:8080', 'intranet.example:443', 'localhost:3000']);
  });

  it('is empty when set to an empty string or only separators', () => {
    // Prepare
    process.env.PDF_ALLOW_PRIVATE_HOSTS = ' , ,';

    // Act
    const hosts = settings.allowPrivateHosts;

    // Assess
    expect(hosts.size).toBe(0);
  });

  it('holds a single entry without a comma', () => {
    // Prepare
    process.env.PDF_ALLOW_PRIVATE_HOSTS = 'fixtures.local:8443';

    // Act
    const hosts = settings.allowPrivateHosts;

    // Assess
    expect(hosts.has('fixtures.local:8443')).toBe(true);
    expect(hosts.size).toBe(1);
  });
});
