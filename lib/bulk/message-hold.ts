/**
 * How a bulk worker holds the work of the message it runs, a chunk or a job's completion
 * (lib/bulk/bulk-records.ts says why, with the durations): the message hidden for
 * HOLD_MESSAGE_SECONDS from its receipt, the work's lease taken for HOLD_LEASE_MS, and both renewed
 * every HOLD_HEARTBEAT_MS while the work runs, each for a short while, so that a worker that crashes
 * or times out leaves its work to come back within about two minutes, instead of the bulk queue's
 * 18-minute visibility timeout (which Lambda requires to be longer than the function's 15). The
 * lease is always renewed before the message is hidden again, and the message hidden past the
 * lease, so the message never comes back while the lease still holds the work: its next delivery
 * finds the work free. A renewal that fails is logged and tried at the next beat: the lease and the
 * message still outlive a missed beat or two, and work taken over meanwhile by the message's next
 * delivery is harmless (a chunk's lines are stored once whoever renders them; every step of a
 * completion may be run again without effect).
 */
import { errorFields, logger } from '#lib/observability/logger.ts';
import { HOLD_HEARTBEAT_MS, HOLD_MESSAGE_SECONDS } from './bulk-records.ts';

/** The message a worker runs, as far as the worker changes it: how long it stays hidden from now (ChangeMessageVisibility). */
export interface HeldMessage {
  hide(seconds: number): Promise<void>;
}

/** The lease of a message's work (a chunk's, a completion's), in the job's records. */
export interface WorkLease<Refusal extends string> {
  /** Takes it for HOLD_LEASE_MS: `taken`, or why not (`busy`: another worker holds it; `done`...). */
  take(): Promise<'taken' | Refusal>;
  /** Renews it for HOLD_LEASE_MS from now; `lost` ends the renewals (the work is done, or another delivery has it). */
  renew(): Promise<'held' | 'lost'>;
  /** Gives it up (the work failed): the message's next delivery takes it at once. */
  release(): Promise<void>;
}

export interface Renewals {
  /**
   * Ends the renewals (the work is done, given up, or failed) and resolves once a renewal under way
   * has ended, so that it cannot hide the message after its caller set when it comes back (a caught
   * error's retry delay).
   */
  stop(): Promise<void>;
}

export interface Renewer {
  /** Renews the work's lease; `lost` ends the renewals. */
  renewLease(): Promise<'held' | 'lost'>;
  /** Hides the message again, from now. */
  hideMessage(): Promise<void>;
  readonly everyMs: number;
}

/** Renews the lease, then hides the message, every `everyMs`, until stopped or the lease is lost. */
export function renewWhileWorking({ renewLease, hideMessage, everyMs }: Renewer): Renewals {
  let stopped = false;
  let beating: Promise<void> = Promise.resolve();
  const beat = async () => {
    try {
      if ((await renewLease()) === 'lost') return void stop();
      // The lease first: the message must never come back while the lease still holds it.
      await hideMessage();
    } catch (error) {
      logger.warn('bulk work’s hold not renewed; tried again at the next beat', errorFields(error));
    }
  };
  const timer = setInterval(() => {
    // One renewal at a time: a slow one is not overtaken by the next.
    beating = beating.then(() => (stopped ? undefined : beat()));
  }, everyMs);
  // The worker's own work keeps its invocation alive; the hold never does.
  timer.unref();
  function stop(): Promise<void> {
    stopped = true;
    clearInterval(timer);
    return beating;
  }
  return { stop };
}

/**
 * Runs `work` holding its message and its lease: the message hidden for HOLD_MESSAGE_SECONDS first
 * (whatever happens next, a busy lease or a crash, it is back within minutes; if SQS refuses, the
 * queue's visibility timeout still brings it back), then the lease taken, and both renewed while
 * `work` runs. `{ ran }` with the work's value, or the lease's refusal (nothing run). If `work`
 * throws, the renewals end and the lease is given up before the error goes on, so the message's
 * next delivery, at the caller's retry delay, finds the work free.
 *
 * `message` is absent where no message is the worker's to hide (the reconcile function, from the
 * dead-letter queue, whose visibility timeout outlives its invocation and a lease): the lease alone
 * is held.
 */
export async function holdingMessage<Refusal extends string, T>(
  message: HeldMessage | undefined,
  lease: WorkLease<Refusal>,
  work: () => Promise<T>,
): Promise<{ readonly ran: T } | { readonly refused: Refusal }> {
  const hideMessage = async () => message?.hide(HOLD_MESSAGE_SECONDS);
  await hideMessage().catch((error: unknown) => logger.warn('bulk message left to its queue’s visibility timeout', errorFields(error)));
  const taken = await lease.take();
  if (taken !== 'taken') return { refused: taken as Refusal };
  const renewals = renewWhileWorking({ renewLease: () => lease.renew(), hideMessage, everyMs: HOLD_HEARTBEAT_MS });
  try {
    return { ran: await work() };
  } catch (error) {
    await renewals.stop();
    await lease.release().catch(() => undefined);
    throw error;
  } finally {
    await renewals.stop();
  }
}
