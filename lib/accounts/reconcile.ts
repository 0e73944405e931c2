/**
 * Reconciliation: quota held by requests that died is settled by what they really stored.
 *
 * A request that dies between its reservation and its settlement (a crash, kill -9, a container
 * lost mid-batch) leaves its reservation on the month's counter (lib/accounts/quota.ts). Once the
 * reservation has expired, no request can still be working under it, and the PDF records written
 * under it are the truth: the counter is corrected to exactly those, and the reservation removed.
 * Each repair is one conditional write, so running this twice, or from two places at once, repairs
 * each reservation once.
 *
 * It runs for one key when a request would otherwise be refused for quota, for every key at local
 * start-up, and on a schedule in AWS (the reconcile function, cdk/stack.ts).
 */
import { errorFields, logger } from '#lib/observability/logger.ts';
import { countRecordsOf, type PdfStore } from '#lib/storage/pdfs.ts';
import {
  countersWithExpiredReservations,
  expiredReservations,
  quotaPeriod,
  repairReservation,
  RESERVATION_LIFETIME_MS,
  type ExpiredReservation,
} from './quota.ts';
import type { CounterStore } from './rate-limit.ts';

/** Slack for clocks of different machines around a reservation's lifetime. */
const CLOCK_SLACK_MS = 60_000;

export interface ReconciliationReport {
  /** Reservations settled by their records. */
  readonly repaired: number;
  /** PDFs given back to customers: reserved by requests that died, never stored. */
  readonly returned: number;
  /** PDFs charged that a dead request stored but never settled (a batch killed after writing records). */
  readonly charged: number;
  /** Reservations whose repair failed (logged): left as they are for the next run. */
  readonly errors: number;
}

/** Each reservation on its own: one whose repair fails is logged and counted, and the others are still repaired. */
async function repairAll(stores: { counters: CounterStore; pdfs: PdfStore }, expired: readonly ExpiredReservation[]): Promise<ReconciliationReport> {
  let repaired = 0;
  let returned = 0;
  let charged = 0;
  let errors = 0;
  for (const dead of expired) {
    try {
      const expires = dead.expires;
      const stored = await countRecordsOf(stores.pdfs, dead.reservation.keyId, dead.reservation.id, {
        from: new Date(expires - dead.lifetimeMs - CLOCK_SLACK_MS),
        to: new Date(expires + CLOCK_SLACK_MS),
      });
      const correction = await repairReservation(stores.counters, dead, stored);
      if (correction === undefined) continue;
      repaired++;
      if (correction < 0) returned -= correction;
      else charged += correction;
    } catch (error) {
      errors++;
      logger.error('reservation not reconciled; the next run tries again', { key_id: dead.reservation.keyId, reservation_id: dead.reservation.id, ...errorFields(error) });
    }
  }
  const report = { repaired, returned, charged, errors };
  if (repaired > 0) logger.warn('reconciled reservations of requests that died', { ...report });
  return report;
}

/** Settles one key's expired reservations of the current month; returns how many were repaired. */
export async function repairDeadRequestsOf(stores: { counters: CounterStore; pdfs: PdfStore }, keyId: string, now: Date): Promise<number> {
  const expired = await expiredReservations(stores.counters, keyId, quotaPeriod(now), now);
  return expired.length === 0 ? 0 : (await repairAll(stores, expired)).repaired;
}

/**
 * Settles every key's expired reservations. The local stack, the only process that serves its data,
 * passes `everyRequestIsDead` at start-up: each request's reservation left from before belongs to a
 * request that died with the previous run, expired or not. An asynchronous job's is not: the job
 * is resumed (lib/jobs/jobs.ts) and settles it, and only once it expires is it repaired here.
 */
export async function reconcileQuotas(
  stores: { counters: CounterStore; pdfs: PdfStore },
  now: Date,
  { everyRequestIsDead = false }: { everyRequestIsDead?: boolean } = {},
): Promise<ReconciliationReport> {
  const requestsDeadBy = everyRequestIsDead ? new Date(now.getTime() + RESERVATION_LIFETIME_MS) : undefined;
  return repairAll(stores, await countersWithExpiredReservations(stores.counters, { now, ...(requestsDeadBy && { requestsDeadBy }) }));
}
