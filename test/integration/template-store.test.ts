/**
 * The template store's records (lib/storage/templates.ts) under concurrency, against dynalite and
 * s3rver through the real AWS SDK: the count limit holds however many creates race, racing saves
 * each get a version of their own, a create that died gives its slot back, only the kept versions
 * remain, and a failed save or a delete leaves no body behind in the bucket.
 */
import { ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  addTemplateVersion,
  createTemplate,
  deleteTemplate,
  getTemplateHead,
  getTemplateVersion,
  listTemplates,
  newTemplateId,
  type TemplateStore,
} from '#lib/storage/templates.ts';
import { startTestTable } from '../support/dynamo.ts';
import { startTestS3 } from '../support/s3rver.ts';
import { TEMPLATE_LIMITS } from '#lib/accounts/tiers.ts';
import { templateReader } from '#lib/documents/templates.ts';

let table: Awaited<ReturnType<typeof startTestTable>>;
let bucket: Awaited<ReturnType<typeof startTestS3>>;
let store: TemplateStore;

beforeAll(async () => {
  [table, bucket] = await Promise.all([startTestTable(), startTestS3()]);
  store = { dynamo: table.store.client, s3: bucket.s3, tableName: table.store.tableName, bucketName: bucket.bucketName };
});

afterAll(async () => {
  await Promise.all([table.close(), bucket.close()]);
});

const body = (text: string) => JSON.stringify({ html: `<p>${text}</p>` });
/** Over MAX_INLINE_BODY_BYTES: kept as an object in the bucket. */
const largeBody = (text: string) => JSON.stringify({ html: `<p>${text}</p><!-- ${'x'.repeat(70_000)} -->` });

/** The objects under a template's prefix of the bucket. */
async function bodiesOf(keyId: string, templateId: string): Promise<string[]> {
  const { Contents } = await bucket.s3.send(new ListObjectsV2Command({ Bucket: bucket.bucketName, Prefix: `templates/${keyId}/${templateId}/` }));
  return (Contents ?? []).map(({ Key }) => Key!);
}
const create = (keyId: string, maxTemplates: number, now = new Date()) =>
  createTemplate(store, { id: newTemplateId(), keyId, name: 'T', body: body('v1'), now, maxTemplates });

describe('template store', () => {
  it('admits exactly the limit of 20 simultaneous creates for one key, and one more once a template is deleted', async () => {
    // Act
    const results = await Promise.all(Array.from({ length: 20 }, () => create('key_race', 5)));

    // Assess
    const made = results.filter((result) => 'head' in result);
    expect(made).toHaveLength(5);
    expect(results.filter((result) => 'limitReached' in result)).toHaveLength(15);
    expect((await listTemplates(store, 'key_race', { limit: 100 })).heads).toHaveLength(5);

    const first = made[0] as Extract<(typeof made)[number], { head: unknown }>;
    await deleteTemplate(store, first.head, { now: new Date() });
    expect('head' in (await create('key_race', 5))).toBe(true);
    expect('limitReached' in (await create('key_race', 5))).toBe(true);
  });

  it('gives back the slot of a create that died before its template was written, once it is old enough to be dead', async () => {
    // Prepare: a slot taken ten minutes ago by a create that never wrote its head (a crash), filling the key.
    const { UpdateCommand } = await import('@aws-sdk/lib-dynamodb');
    await store.dynamo.send(
      new UpdateCommand({
        TableName: store.tableName,
        Key: { pk: 'TEMPLATES#key_crash', sk: 'SLOTS' },
        UpdateExpression: 'SET #live = :live',
        ExpressionAttributeNames: { '#live': 'live' },
        ExpressionAttributeValues: { ':live': { tpl_diedbeforeitshead000000: Date.now() - 10 * 60_000 } },
      }),
    );

    // Act
    const created = await create('key_crash', 1);

    // Assess
    expect('head' in created).toBe(true);
  });

  it('gives each of 8 simultaneous saves a version of its own, the latest naming the last, every one readable', async () => {
    // Prepare
    const made = await create('key_versions', 10);
    if (!('head' in made)) throw new Error('not created');
    const id = made.head.id;

    // Act
    const saved = await Promise.all(
      Array.from({ length: 8 }, (_, i) => addTemplateVersion(store, { id, keyId: 'key_versions', name: `v${i}`, body: body(`save ${i}`), now: new Date(), versionsKept: 100 })),
    );

    // Assess
    const versions = saved.map((result) => result?.version.version).sort((a, b) => (a ?? 0) - (b ?? 0));
    expect(versions).toEqual([2, 3, 4, 5, 6, 7, 8, 9]);
    expect((await getTemplateHead(store, id))?.latestVersion).toBe(9);
    for (const result of saved) {
      const stored = await getTemplateVersion(store, id, result!.version.version);
      expect(stored?.body).toBe(result!.version.body);
    }
  });

  it('keeps only the newest versions: saving past the kept number drops the oldest', async () => {
    // Prepare
    const made = await create('key_prune', 10);
    if (!('head' in made)) throw new Error('not created');
    const id = made.head.id;

    // Act
    for (let i = 2; i <= 5; i++) await addTemplateVersion(store, { id, keyId: 'key_prune', name: 'T', body: body(`v${i}`), now: new Date(), versionsKept: 3 });

    // Assess
    const present = await Promise.all([1, 2, 3, 4, 5].map(async (version) => (await getTemplateVersion(store, id, version)) !== undefined));
    expect(present).toEqual([false, false, true, true, true]);
  });

  it("renders only the tier's kept versions: one pruned by later saves is not found, even right after it was read and cached", async () => {
    // Prepare: a free key's template (TEMPLATE_LIMITS.free.versionsKept kept), its version 1 read (compiled and cached in this process)
    const made = await create('key_cached', 10);
    if (!('head' in made)) throw new Error('not created');
    const id = made.head.id;
    const owner = { keyId: 'key_cached', tier: 'free' as const };
    expect(await templateReader(store, owner)(id, 1)).toMatchObject({ id, version: 1 });
    const { versionsKept } = TEMPLATE_LIMITS.free;

    // Act: one save past the kept number prunes version 1
    for (let n = 2; n <= versionsKept + 1; n++) await addTemplateVersion(store, { id, keyId: 'key_cached', name: 'T', body: body(`v${n}`), now: new Date(), versionsKept });
    const read = templateReader(store, owner);

    // Assess
    expect(await getTemplateVersion(store, id, 1)).toBeUndefined();
    expect(await read(id, 1)).toBeUndefined();
    expect(await read(id, 2)).toMatchObject({ version: 2, content: { html: '<p>v2</p>' } });
  });

  it('deletes a template whole: no head, no versions, out of the listing, a save after it refused', async () => {
    // Prepare
    const made = await create('key_delete', 10);
    if (!('head' in made)) throw new Error('not created');
    const saved = await addTemplateVersion(store, { id: made.head.id, keyId: 'key_delete', name: 'T', body: body('v2'), now: new Date(), versionsKept: 10 });

    // Act
    await deleteTemplate(store, saved!.head, { now: new Date() });

    // Assess
    expect(await getTemplateHead(store, made.head.id)).toBeUndefined();
    expect(await getTemplateVersion(store, made.head.id, 1)).toBeUndefined();
    expect(await getTemplateVersion(store, made.head.id, 2)).toBeUndefined();
    expect((await listTemplates(store, 'key_delete', { limit: 10 })).heads).toEqual([]);
    expect(await addTemplateVersion(store, { id: made.head.id, keyId: 'key_delete', name: 'T', body: body('v3'), now: new Date(), versionsKept: 10 })).toBeUndefined();
  });
  it('drops every version older than the kept ones, also when the tier now keeps fewer than before', async () => {
    // Prepare: six versions kept (one tier), then saves under a tier that keeps three
    const made = await create('key_downgrade', 10);
    if (!('head' in made)) throw new Error('not created');
    const id = made.head.id;
    for (let n = 2; n <= 6; n++) await addTemplateVersion(store, { id, keyId: 'key_downgrade', name: 'T', body: largeBody(`v${n}`), now: new Date(), versionsKept: 6 });
    expect(await bodiesOf('key_downgrade', id)).toHaveLength(5);

    // Act
    await addTemplateVersion(store, { id, keyId: 'key_downgrade', name: 'T', body: largeBody('v7'), now: new Date(), versionsKept: 3 });

    // Assess: versions 5, 6 and 7 remain, with exactly their three bodies
    const present = await Promise.all([1, 2, 3, 4, 5, 6, 7].map(async (version) => (await getTemplateVersion(store, id, version)) !== undefined));
    expect(present).toEqual([false, false, false, false, true, true, true]);
    expect(await bodiesOf('key_downgrade', id)).toHaveLength(3);
  });

  it('removes the body a failed save stored: a large save to a deleted template, or as another key, leaves no object', async () => {
    // Prepare
    const made = await create('key_failed', 10);
    if (!('head' in made)) throw new Error('not created');
    const id = made.head.id;
    const deletedMade = await create('key_failed', 10);
    if (!('head' in deletedMade)) throw new Error('not created');
    await deleteTemplate(store, deletedMade.head, { now: new Date() });

    // Act
    const asAnotherKey = await addTemplateVersion(store, { id, keyId: 'key_intruder', name: 'T', body: largeBody('theirs'), now: new Date(), versionsKept: 10 });
    const toDeleted = await addTemplateVersion(store, { id: deletedMade.head.id, keyId: 'key_failed', name: 'T', body: largeBody('late'), now: new Date(), versionsKept: 10 });

    // Assess
    expect(asAnotherKey).toBeUndefined();
    expect(toDeleted).toBeUndefined();
    expect(await bodiesOf('key_intruder', id)).toEqual([]);
    expect(await bodiesOf('key_failed', id)).toEqual([]);
    expect(await bodiesOf('key_failed', deletedMade.head.id)).toEqual([]);
    expect((await getTemplateHead(store, id))?.latestVersion).toBe(1);
  });

  it('deletes every body a template stored: its versions’ and one whose save died before writing its record', async () => {
    // Prepare: large versions 1 to 4, and a body under the template's prefix that no record names
    const id = newTemplateId();
    const made = await createTemplate(store, { id, keyId: 'key_bodies', name: 'T', body: largeBody('v1'), now: new Date(), maxTemplates: 10 });
    if (!('head' in made)) throw new Error('not created');
    for (let n = 2; n <= 4; n++) await addTemplateVersion(store, { id, keyId: 'key_bodies', name: 'T', body: largeBody(`v${n}`), now: new Date(), versionsKept: 10 });
    await bucket.s3.send(new PutObjectCommand({ Bucket: bucket.bucketName, Key: `templates/key_bodies/${id}/orphan.json`, Body: largeBody('orphan') }));
    expect(await bodiesOf('key_bodies', id)).toHaveLength(5);

    // Act
    await deleteTemplate(store, (await getTemplateHead(store, id))!, { now: new Date() });

    // Assess
    expect(await bodiesOf('key_bodies', id)).toEqual([]);
    for (const version of [1, 2, 3, 4]) expect(await getTemplateVersion(store, id, version)).toBeUndefined();
  });
});
