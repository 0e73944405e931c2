/**
 * The production wiring of the domain modules' ports: the shared clients plus the configured table
 * and bucket. Handlers use these; tests may build their own. (Webhooks' wiring reads jobs, so it stands
 * with them: lib/jobs/job-webhooks.ts.)
 */
import type { KeyStore } from '#lib/accounts/keys.ts';
import type { CounterStore } from '#lib/accounts/rate-limit.ts';
import type { PdfStore } from '#lib/storage/pdfs.ts';
import type { TemplateStore } from '#lib/storage/templates.ts';
import type { SigningKeyStore } from '#lib/signatures/signing-keys.ts';
import { settings } from '#lib/settings.ts';
import { dynamo, kms, s3 } from './clients.ts';

export const keyStore = (): KeyStore => ({ client: dynamo(), tableName: settings.tableName });

export const pdfStore = (): PdfStore => ({
  dynamo: dynamo(),
  s3: s3(),
  kms: kms(),
  tableName: settings.tableName,
  bucketName: settings.bucketName,
});

/** Templates live in the same table and bucket as PDFs (lib/storage/templates.ts). */
export const templateStore = (): TemplateStore => pdfStore();

export const counterStore = (): CounterStore => ({ client: dynamo(), tableName: settings.tableName });

/** Signing keys' records live in the one table; their keys in KMS, tagged with the stack (lib/signatures/signing-keys.ts). */
export const signingKeyStore = (): SigningKeyStore => ({ dynamo: dynamo(), kms: kms(), tableName: settings.tableName, stackTag: settings.signingKeyTag });
