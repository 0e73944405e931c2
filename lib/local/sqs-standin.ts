/**
 * A local SQS for the local stack, speaking what the AWS SDK v3 SQS client speaks: the AWS JSON 1.0
 * protocol (`POST /`, `X-Amz-Target: AmazonSQS.<Operation>`, JSON in and out, errors as `__type`).
 *
 * Why our own, when dynalite and s3rver are packages: none of the npm stand-ins does what the bulk
 * pipeline relies on (checked with `npm view` and by reading their code, at these versions):
 * - sqslite 2.1.1 speaks the Query (XML) protocol only, which SDK v3 no longer sends;
 * - fauxqs 2.4.1 speaks JSON and persists to SQLite, but serves a standard queue strictly first in,
 *   first out, ignoring MessageGroupId: a key's 200,000 queued chunks would starve another key's 2
 *   (SQS fair queues are the reason we set MessageGroupId at all), and it listens on every interface;
 * - local-aws-sqs 2.0.2 and sqs-mock are Query-protocol or in-process mocks; ElasticMQ, goaws and
 *   moto need Java, Go or Python.
 *
 * What it implements, as SQS documents it, and nothing else (anything else is answered
 * `UnsupportedOperation`): CreateQueue, GetQueueUrl, GetQueueAttributes, SendMessage(Batch) with
 * SQS's limits (a message of at most 1 MiB, a batch of at most 10 messages and 1 MiB of bodies, the
 * characters SQS takes: what AWS would refuse is refused here too, so the local stack finds it first),
 * ReceiveMessage (visibility timeout, long polling, ApproximateReceiveCount and the other system
 * attributes), DeleteMessage(Batch), ChangeMessageVisibility, PurgeQueue; a RedrivePolicy moves a
 * message to its dead-letter queue once it was received maxReceiveCount times; and fair queues: on a
 * standard queue, messages with a MessageGroupId are delivered preferring the groups with the fewest
 * messages in flight, so a group with a backlog (a noisy tenant) does not hold back a quiet one.
 * Message attributes, FIFO queues and delays are not implemented (nothing of ours sends them).
 *
 * Durable as SQS is: every change is appended to a journal (`<dir>/journal.jsonl`, one JSON line,
 * written synchronously before the answer) and replayed at start, so a kill -9 of the stack loses
 * no message. Messages in flight when the stand-in stopped are visible again at once when it starts:
 * their receivers were in this same process and died with it.
 */
import { createHash, randomUUID } from 'node:crypto';
import { appendFileSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { AwsJsonError } from './aws-json-error.ts';

const ACCOUNT = '000000000000';
const REGION = 'us-east-1';
/** SQS's largest message, and the largest sum of a batch's bodies, since August 2025 (1 MiB each). */
const MAX_MESSAGE_BYTES = 1_048_576;
const DEFAULT_VISIBILITY_TIMEOUT_S = 30;
const MAX_WAIT_SECONDS = 20;

interface Message {
  readonly id: string;
  readonly body: string;
  readonly md5: string;
  readonly group?: string;
  /** Order of arrival in its queue: who is oldest. */
  readonly seq: number;
  readonly sentAt: number;
  receiveCount: number;
  firstReceivedAt?: number;
  /** In flight: its current receipt handle and when it becomes visible again. */
  receipt?: string;
  visibleAt?: number;
}

interface Queue {
  readonly name: string;
  readonly attributes: Record<string, string>;
  readonly createdAt: number;
  readonly messages: Map<string, Message>;
  /** Visible messages by group ('' for none), each oldest first. */
  readonly visible: Map<string, Message[]>;
  /** In-flight count by group. */
  readonly inFlight: Map<string, number>;
  readonly byReceipt: Map<string, Message>;
  nextSeq: number;
  /** Long polls waiting for a message. */
  readonly waiters: Set<() => void>;
}

type JournalEntry =
  | { op: 'create'; name: string; attributes: Record<string, string>; at: number }
  | { op: 'send'; queue: string; id: string; body: string; group?: string; at: number }
  | { op: 'receive'; queue: string; id: string; count: number; first: number }
  | { op: 'delete'; queue: string; id: string }
  | { op: 'move'; queue: string; to: string; id: string }
  | { op: 'purge'; queue: string };

const md5 = (text: string) => createHash('md5').update(text, 'utf8').digest('hex');

export interface SqsStandIn {
  readonly endpoint: string;
  close(): Promise<void>;
}

/** Starts the stand-in on `port` (0: a free one) of 127.0.0.1, its state under `directory`. */
export async function startSqsStandIn({ directory, port }: { directory: string; port: number }): Promise<SqsStandIn> {
  const queues = new Map<string, Queue>();
  mkdirSync(directory, { recursive: true });
  const journalPath = join(directory, 'journal.jsonl');
  let replaying = true;
  let endpoint = '';

  const journal = (entry: JournalEntry) => {
    if (!replaying) appendFileSync(journalPath, JSON.stringify(entry) + '\n');
  };

  const queueUrl = (name: string) => `${endpoint}/${ACCOUNT}/${name}`;
  const queueArn = (name: string) => `arn:aws:sqs:${REGION}:${ACCOUNT}:${name}`;

  function queueOf(url: unknown): Queue {
    const name = typeof url === 'string' ? url.split('/').pop() : undefined;
    const queue = name ? queues.get(name) : undefined;
    if (!queue) throw new AwsJsonError('QueueDoesNotExist', 'The specified queue does not exist.');
    return queue;
  }

  function createQueue(name: string, attributes: Record<string, string>, at: number): Queue {
    const queue: Queue = {
      name,
      attributes,
      createdAt: at,
      messages: new Map(),
      visible: new Map(),
      inFlight: new Map(),
      byReceipt: new Map(),
      nextSeq: 0,
      waiters: new Set(),
    };
    queues.set(name, queue);
    return queue;
  }

  /** Puts a message among the visible ones of its group, in order of arrival. */
  function makeVisible(queue: Queue, message: Message): void {
    const group = message.group ?? '';
    const line = queue.visible.get(group) ?? [];
    let at = line.length;
    while (at > 0 && line[at - 1]!.seq > message.seq) at--;
    line.splice(at, 0, message);
    queue.visible.set(group, line);
    for (const wake of queue.waiters) wake();
  }

  function takeVisible(queue: Queue, message: Message): void {
    const group = message.group ?? '';
    const line = queue.visible.get(group);
    const at = line?.indexOf(message) ?? -1;
    if (line && at >= 0) line.splice(at, 1);
    if (line && line.length === 0) queue.visible.delete(group);
  }

  function endFlight(queue: Queue, message: Message): void {
    if (message.receipt === undefined) return;
    queue.byReceipt.delete(message.receipt);
    message.receipt = undefined;
    message.visibleAt = undefined;
    const group = message.group ?? '';
    const count = (queue.inFlight.get(group) ?? 1) - 1;
    if (count > 0) queue.inFlight.set(group, count);
    else queue.inFlight.delete(group);
  }

  /** In-flight messages whose visibility timeout ran out become visible again. */
  function returnExpired(queue: Queue, now: number): void {
    for (const message of queue.byReceipt.values()) {
      if ((message.visibleAt ?? Infinity) <= now) {
        endFlight(queue, message);
        makeVisible(queue, message);
      }
    }
  }

  function addMessage(queue: Queue, id: string, body: string, group: string | undefined, at: number): Message {
    const message: Message = { id, body, md5: md5(body), seq: queue.nextSeq++, sentAt: at, receiveCount: 0, ...(group !== undefined && { group }) };
    queue.messages.set(id, message);
    makeVisible(queue, message);
    return message;
  }

  function removeMessage(queue: Queue, message: Message): void {
    endFlight(queue, message);
    takeVisible(queue, message);
    queue.messages.delete(message.id);
  }

  function redrive(queue: Queue): { maxReceiveCount: number; target: Queue } | undefined {
    const policy = queue.attributes.RedrivePolicy;
    if (!policy) return undefined;
    const { deadLetterTargetArn, maxReceiveCount } = JSON.parse(policy) as { deadLetterTargetArn: string; maxReceiveCount: number | string };
    const target = queues.get(String(deadLetterTargetArn).split(':').pop() ?? '');
    return target ? { maxReceiveCount: Number(maxReceiveCount), target } : undefined;
  }

  /**
   * The next visible message a fair queue delivers: from the group with the fewest messages in
   * flight (the quietest tenant), the oldest first between equals.
   */
  function nextFair(queue: Queue): Message | undefined {
    let best: Message | undefined;
    let bestLoad = Infinity;
    for (const [group, line] of queue.visible) {
      const head = line[0];
      if (!head) continue;
      const load = group === '' ? -1 : (queue.inFlight.get(group) ?? 0);
      if (load < bestLoad || (load === bestLoad && head.seq < best!.seq)) {
        best = head;
        bestLoad = load;
      }
    }
    return best;
  }

  function receive(queue: Queue, max: number, visibilityTimeoutS: number): Message[] {
    const now = Date.now();
    returnExpired(queue, now);
    const received: Message[] = [];
    const policy = redrive(queue);
    while (received.length < max) {
      const message = nextFair(queue);
      if (!message) break;
      takeVisible(queue, message);
      if (policy && message.receiveCount >= policy.maxReceiveCount) {
        // Received maxReceiveCount times and back again: to the dead-letter queue, as SQS moves it.
        journal({ op: 'move', queue: queue.name, to: policy.target.name, id: message.id });
        queue.messages.delete(message.id);
        const moved = addMessage(policy.target, message.id, message.body, message.group, message.sentAt);
        moved.receiveCount = message.receiveCount;
        continue;
      }
      message.receiveCount++;
      message.firstReceivedAt ??= now;
      message.receipt = `${message.id}.${randomUUID()}`;
      message.visibleAt = now + visibilityTimeoutS * 1000;
      queue.byReceipt.set(message.receipt, message);
      const group = message.group ?? '';
      queue.inFlight.set(group, (queue.inFlight.get(group) ?? 0) + 1);
      journal({ op: 'receive', queue: queue.name, id: message.id, count: message.receiveCount, first: message.firstReceivedAt });
      received.push(message);
    }
    return received;
  }

  function validateBody(body: unknown): string {
    if (typeof body !== 'string' || body.length === 0) throw new AwsJsonError('MissingParameter', 'The request must contain the parameter MessageBody.');
    if (Buffer.byteLength(body) > MAX_MESSAGE_BYTES) throw new AwsJsonError('InvalidParameterValue', `One or more parameters are invalid. Reason: Message must be shorter than ${MAX_MESSAGE_BYTES} bytes.`);
    // The characters SQS takes (XML's): a lone surrogate or a control character is refused.
    if (/[^\t\n\r\x20-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/u.test(body)) {
      throw new AwsJsonError('InvalidMessageContents', 'Invalid characters found. Valid characters are #x9 | #xA | #xD | #x20 to #xD7FF | #xE000 to #xFFFD | #x10000 to #x10FFFF.');
    }
    return body;
  }

  function send(queue: Queue, body: unknown, group: unknown): Message {
    const text = validateBody(body);
    if (group !== undefined && (typeof group !== 'string' || !/^[\x21-\x7e]{1,128}$/.test(group))) {
      throw new AwsJsonError('InvalidParameterValue', 'MessageGroupId must be 1 to 128 printable ASCII characters.');
    }
    const id = randomUUID();
    const at = Date.now();
    journal({ op: 'send', queue: queue.name, id, body: text, ...(group !== undefined && { group: group as string }), at });
    return addMessage(queue, id, text, group as string | undefined, at);
  }

  function deleteByReceipt(queue: Queue, receipt: unknown): void {
    if (typeof receipt !== 'string' || !receipt.includes('.')) throw new AwsJsonError('ReceiptHandleIsInvalid', 'The input receipt handle is invalid.');
    const message = queue.byReceipt.get(receipt);
    // A handle from an earlier receive (the message was received again since) deletes nothing, as SQS says it may not.
    if (!message) return;
    journal({ op: 'delete', queue: queue.name, id: message.id });
    removeMessage(queue, message);
  }

  function visibilityOf(value: unknown, fallback: number): number {
    if (value === undefined) return fallback;
    const seconds = Number(value);
    if (!Number.isInteger(seconds) || seconds < 0 || seconds > 43_200) throw new AwsJsonError('InvalidParameterValue', 'VisibilityTimeout must be 0 to 43200 seconds.');
    return seconds;
  }

  const view = (message: Message, wanted: readonly string[]) => {
    const all = wanted.includes('All');
    const attributes: Record<string, string> = {};
    const add = (name: string, value: string | undefined) => {
      if (value !== undefined && (all || wanted.includes(name))) attributes[name] = value;
    };
    add('ApproximateReceiveCount', String(message.receiveCount));
    add('SentTimestamp', String(message.sentAt));
    add('ApproximateFirstReceiveTimestamp', message.firstReceivedAt === undefined ? undefined : String(message.firstReceivedAt));
    add('MessageGroupId', message.group);
    add('SenderId', ACCOUNT);
    return { MessageId: message.id, ReceiptHandle: message.receipt, MD5OfBody: message.md5, Body: message.body, ...(Object.keys(attributes).length && { Attributes: attributes }) };
  };

  const operations: Record<string, (input: Record<string, any>) => unknown> = {
    CreateQueue: ({ QueueName, Attributes = {} }) => {
      if (typeof QueueName !== 'string' || !/^[\w-]{1,80}$/.test(QueueName)) throw new AwsJsonError('InvalidParameterValue', 'Queue names are 1 to 80 letters, digits, - and _.');
      const existing = queues.get(QueueName);
      if (existing) {
        if (JSON.stringify(existing.attributes) !== JSON.stringify(Attributes)) throw new AwsJsonError('QueueNameExists', 'A queue already exists with the same name and a different value for attribute(s).');
      } else {
        const at = Date.now();
        journal({ op: 'create', name: QueueName, attributes: Attributes, at });
        createQueue(QueueName, Attributes, at);
      }
      return { QueueUrl: queueUrl(QueueName) };
    },
    GetQueueUrl: ({ QueueName }) => {
      if (!queues.has(QueueName)) throw new AwsJsonError('QueueDoesNotExist', 'The specified queue does not exist.');
      return { QueueUrl: queueUrl(QueueName) };
    },
    GetQueueAttributes: ({ QueueUrl }) => {
      const queue = queueOf(QueueUrl);
      returnExpired(queue, Date.now());
      let visible = 0;
      for (const line of queue.visible.values()) visible += line.length;
      return {
        Attributes: {
          VisibilityTimeout: String(DEFAULT_VISIBILITY_TIMEOUT_S),
          ...queue.attributes,
          QueueArn: queueArn(queue.name),
          ApproximateNumberOfMessages: String(visible),
          ApproximateNumberOfMessagesNotVisible: String(queue.byReceipt.size),
          ApproximateNumberOfMessagesDelayed: '0',
          CreatedTimestamp: String(Math.floor(queue.createdAt / 1000)),
        },
      };
    },
    SendMessage: ({ QueueUrl, MessageBody, MessageGroupId }) => {
      const message = send(queueOf(QueueUrl), MessageBody, MessageGroupId);
      return { MessageId: message.id, MD5OfMessageBody: message.md5 };
    },
    SendMessageBatch: ({ QueueUrl, Entries }) => {
      const queue = queueOf(QueueUrl);
      if (!Array.isArray(Entries) || Entries.length === 0) throw new AwsJsonError('EmptyBatchRequest', 'There should be at least one SendMessageBatchRequestEntry in the request.');
      if (Entries.length > 10) throw new AwsJsonError('TooManyEntriesInBatchRequest', 'Maximum number of entries per request are 10.');
      if (new Set(Entries.map((entry: { Id?: unknown }) => entry.Id)).size !== Entries.length) throw new AwsJsonError('BatchEntryIdsNotDistinct', 'Two or more batch entries in the request have the same Id.');
      const total = Entries.reduce((sum: number, entry: { MessageBody?: unknown }) => sum + Buffer.byteLength(String(entry.MessageBody ?? '')), 0);
      if (total > MAX_MESSAGE_BYTES) throw new AwsJsonError('BatchRequestTooLong', 'Batch requests cannot be longer than 1048576 bytes.');
      const Successful: unknown[] = [];
      const Failed: unknown[] = [];
      for (const entry of Entries as { Id: string; MessageBody: unknown; MessageGroupId?: unknown }[]) {
        try {
          const message = send(queue, entry.MessageBody, entry.MessageGroupId);
          Successful.push({ Id: entry.Id, MessageId: message.id, MD5OfMessageBody: message.md5 });
        } catch (error) {
          if (!(error instanceof AwsJsonError)) throw error;
          Failed.push({ Id: entry.Id, SenderFault: true, Code: error.type, Message: error.message });
        }
      }
      return { Successful, Failed };
    },
    ReceiveMessage: async ({ QueueUrl, MaxNumberOfMessages = 1, VisibilityTimeout, WaitTimeSeconds = 0, MessageSystemAttributeNames = [], AttributeNames = [] }) => {
      const queue = queueOf(QueueUrl);
      const max = Number(MaxNumberOfMessages);
      if (!Number.isInteger(max) || max < 1 || max > 10) throw new AwsJsonError('InvalidParameterValue', 'MaxNumberOfMessages must be 1 to 10.');
      const wait = Number(WaitTimeSeconds);
      if (!Number.isInteger(wait) || wait < 0 || wait > MAX_WAIT_SECONDS) throw new AwsJsonError('InvalidParameterValue', 'WaitTimeSeconds must be 0 to 20.');
      const visibility = visibilityOf(VisibilityTimeout, Number(queue.attributes.VisibilityTimeout ?? DEFAULT_VISIBILITY_TIMEOUT_S));
      const wanted = [...MessageSystemAttributeNames, ...AttributeNames] as string[];
      let messages = receive(queue, max, visibility);
      const giveUpAt = Date.now() + wait * 1000;
      while (messages.length === 0 && Date.now() < giveUpAt && !closing) {
        // Woken by a send or a returning message, or every 100 ms for visibility timeouts running out.
        await new Promise<void>((resolve) => {
          const wake = () => {
            clearTimeout(timer);
            queue.waiters.delete(wake);
            resolve();
          };
          const timer = setTimeout(wake, Math.min(100, Math.max(0, giveUpAt - Date.now())));
          queue.waiters.add(wake);
        });
        messages = receive(queue, max, visibility);
      }
      return messages.length ? { Messages: messages.map((message) => view(message, wanted)) } : {};
    },
    DeleteMessage: ({ QueueUrl, ReceiptHandle }) => {
      deleteByReceipt(queueOf(QueueUrl), ReceiptHandle);
      return {};
    },
    DeleteMessageBatch: ({ QueueUrl, Entries }) => {
      const queue = queueOf(QueueUrl);
      if (!Array.isArray(Entries) || Entries.length === 0) throw new AwsJsonError('EmptyBatchRequest', 'There should be at least one DeleteMessageBatchRequestEntry in the request.');
      if (Entries.length > 10) throw new AwsJsonError('TooManyEntriesInBatchRequest', 'Maximum number of entries per request are 10.');
      const Successful: unknown[] = [];
      const Failed: unknown[] = [];
      for (const entry of Entries as { Id: string; ReceiptHandle: unknown }[]) {
        try {
          deleteByReceipt(queue, entry.ReceiptHandle);
          Successful.push({ Id: entry.Id });
        } catch (error) {
          if (!(error instanceof AwsJsonError)) throw error;
          Failed.push({ Id: entry.Id, SenderFault: true, Code: error.type, Message: error.message });
        }
      }
      return { Successful, Failed };
    },
    ChangeMessageVisibility: ({ QueueUrl, ReceiptHandle, VisibilityTimeout }) => {
      const queue = queueOf(QueueUrl);
      const message = typeof ReceiptHandle === 'string' ? queue.byReceipt.get(ReceiptHandle) : undefined;
      if (!message) throw new AwsJsonError('MessageNotInflight', 'The message referred to is not in flight.');
      const seconds = visibilityOf(VisibilityTimeout, 0);
      if (seconds === 0) {
        endFlight(queue, message);
        makeVisible(queue, message);
      } else message.visibleAt = Date.now() + seconds * 1000;
      return {};
    },
    PurgeQueue: ({ QueueUrl }) => {
      const queue = queueOf(QueueUrl);
      journal({ op: 'purge', queue: queue.name });
      for (const message of [...queue.messages.values()]) removeMessage(queue, message);
      return {};
    },
  };

  // Replay the journal, then write it anew with only what is left (it would grow without end).
  if (existsSync(journalPath)) {
    for (const line of readFileSync(journalPath, 'utf8').split('\n')) {
      if (!line) continue;
      let entry: JournalEntry;
      try {
        entry = JSON.parse(line) as JournalEntry;
      } catch {
        continue; // the last line of a run killed mid-write
      }
      if (entry.op === 'create') createQueue(entry.name, entry.attributes, entry.at);
      const queue = 'queue' in entry ? queues.get(entry.queue) : undefined;
      if (!queue) continue;
      const message = 'id' in entry ? queue.messages.get(entry.id) : undefined;
      if (entry.op === 'send') addMessage(queue, entry.id, entry.body, entry.group, entry.at);
      else if (entry.op === 'receive' && message) {
        message.receiveCount = entry.count;
        message.firstReceivedAt = entry.first;
      } else if (entry.op === 'delete' && message) removeMessage(queue, message);
      else if (entry.op === 'move' && message) {
        const target = queues.get(entry.to);
        removeMessage(queue, message);
        if (target) addMessage(target, message.id, message.body, message.group, message.sentAt).receiveCount = message.receiveCount;
      } else if (entry.op === 'purge') for (const each of [...queue.messages.values()]) removeMessage(queue, each);
    }
  }
  const compacted: string[] = [];
  for (const queue of queues.values()) compacted.push(JSON.stringify({ op: 'create', name: queue.name, attributes: queue.attributes, at: queue.createdAt } satisfies JournalEntry));
  for (const queue of queues.values()) {
    for (const message of [...queue.messages.values()].sort((a, b) => a.seq - b.seq)) {
      compacted.push(JSON.stringify({ op: 'send', queue: queue.name, id: message.id, body: message.body, ...(message.group !== undefined && { group: message.group }), at: message.sentAt } satisfies JournalEntry));
      if (message.receiveCount > 0) compacted.push(JSON.stringify({ op: 'receive', queue: queue.name, id: message.id, count: message.receiveCount, first: message.firstReceivedAt ?? message.sentAt } satisfies JournalEntry));
    }
  }
  writeFileSync(`${journalPath}.new`, compacted.map((line) => line + '\n').join(''));
  renameSync(`${journalPath}.new`, journalPath);
  replaying = false;

  let closing = false;
  const answer = (response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    response.writeHead(status, { 'Content-Type': 'application/x-amz-json-1.0', 'x-amzn-RequestId': randomUUID(), ...headers });
    response.end(JSON.stringify(body));
  };
  const server: Server = createServer(async (request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const target = String(request.headers['x-amz-target'] ?? '');
    const operation = target.startsWith('AmazonSQS.') ? operations[target.slice('AmazonSQS.'.length)] : undefined;
    try {
      if (request.method !== 'POST' || !operation) throw new AwsJsonError('UnsupportedOperation', `${target || 'This request'} is not supported by the local SQS stand-in (it speaks AWS JSON 1.0).`);
      let input: Record<string, unknown>;
      try {
        input = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, unknown>;
      } catch {
        throw new AwsJsonError('InvalidParameterValue', 'The request body is not JSON.');
      }
      answer(response, 200, await operation(input));
    } catch (error) {
      if (!(error instanceof AwsJsonError)) {
        answer(response, 500, { __type: 'com.amazonaws.sqs#InternalError', message: 'internal error' });
        return;
      }
      answer(response, error.status, { __type: `com.amazonaws.sqs#${error.type}`, message: error.message }, { 'x-amzn-query-error': `AWS.SimpleQueueService.${error.type};Sender` });
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    endpoint,
    async close() {
      closing = true;
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
