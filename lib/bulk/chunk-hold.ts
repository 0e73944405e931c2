/**
 * How a bulk worker holds the chunk it works on (lib/bulk/bulk-records.ts says why): every
 * `everyMs` it renews the chunk's lease and hides the chunk's message again, each for a short
 * while, so that a worker that crashes or times out leaves its chunk to come back within about two
 * minutes, instead of the bulk queue's 18-minute visibility timeout, which is sized for a job's
 * completion. A renewal that fails is logged and tried at the next beat: the lease and the message
 * still outlive a missed beat or two, and a chunk taken over meanwhile by the message's next
 * delivery is harmless (its lines are stored once whoever renders them).
 */
import { errorFields, logger } from '#lib/observability/logger.ts';

export interface ChunkHold {
  /**
   * Ends the renewals (the chunk is done, given up, or its worker failed) and resolves once a
   * renewal under way has ended, so that it cannot hide the message after its caller set when it
   * comes back (a caught error's retry delay).
   */
  stop(): Promise<void>;
}

export interface ChunkHolder {
  /** Renews the chunk's lease; `lost` ends the renewals (the chunk is done, or another delivery has it). */
  renewLease(): Promise<'held' | 'lost'>;
  /** Hides the chunk's message again, from now. */
  hideMessage(): Promise<void>;
  readonly everyMs: number;
}

export function holdChunk({ renewLease, hideMessage, everyMs }: ChunkHolder): ChunkHold {
  let stopped = false;
  let beating: Promise<void> = Promise.resolve();
  const beat = async () => {
    try {
      if ((await renewLease()) === 'lost') return void stop();
      // The lease first: the message must never come back while the lease still holds it.
      await hideMessage();
    } catch (error) {
      logger.warn('bulk chunk hold not renewed; tried again at the next beat', errorFields(error));
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
