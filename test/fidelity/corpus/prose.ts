/**
 * Deterministic English prose for the long documents: sentences assembled by a seeded generator
 * from templates and word lists about a coastal town (a harbour, its ferry, the weather, letters
 * and ledgers). The same seed always gives the same text, so two prints of a document are equal.
 */
import { seededRandom } from './assets.ts';

const PEOPLE = [
  'the ferryman', 'the harbourmaster', 'Mrs Penhallow', 'old Tobias', 'the schoolmistress', 'the curate', 'Ada Trevelyan',
  'the lamp-keeper', 'the miller’s widow', 'young Samuel', 'the customs officer', 'the doctor', 'Captain Rowe',
  'the postmistress', 'the net-maker', 'Eliza', 'the carter', 'the innkeeper', 'the surveyor from Truro', 'Martha Keast',
];
const PRONOUN: Record<string, string> = {
  'Mrs Penhallow': 'she', 'the schoolmistress': 'she', 'Ada Trevelyan': 'she', 'the miller’s widow': 'she',
  'the postmistress': 'she', Eliza: 'she', 'Martha Keast': 'she',
};
const TIMES = [
  'In the grey hour before dawn', 'By the middle of the afternoon', 'Later that evening', 'When the tide had turned',
  'On the first Sunday of the month', 'Towards the end of the winter', 'Some time after the bells had rung',
  'Before the mail coach arrived', 'All through the long wet spring', 'Once the boats were drawn up',
  'On market day', 'At first light', 'In the week before the fair', 'After the storm had blown itself out',
];
const PLACES = [
  'along the harbour wall', 'beside the lime kiln', 'at the top of Chapel Street', 'under the dripping eaves of the inn',
  'on the shingle below the church', 'in the back room of the post office', 'out past the breakwater', 'by the old toll-house',
  'across the salt marsh', 'in the shelter of the net lofts', 'at the end of the quay', 'on the cliff path above the cove',
  'in the schoolroom', 'behind the chandler’s shop', 'by the ford at Polwithen', 'on the steps of the custom house',
];
const OBJECTS = [
  'the bundle of letters', 'a lantern with a cracked glass', 'the parish ledger', 'a basket of pilchards', 'the tide tables',
  'a length of tarred rope', 'the key to the lighthouse', 'a map of the estuary', 'the account book', 'a jar of honey',
  'the ferry timetable', 'an oilskin coat', 'a sealed envelope from London', 'the church accounts', 'a crate of slates',
  'the surveyor’s chain', 'a loaf still warm from the oven', 'the brass telescope',
];
const VERBS_PAST = [
  'carried', 'counted', 'examined', 'mended', 'hid', 'returned', 'studied', 'wrapped', 'weighed', 'signed', 'unfolded',
  'set down', 'locked away', 'offered', 'copied out', 'searched for', 'brought back',
];
const FEELINGS = [
  'without a word', 'with great care', 'as if it mattered a great deal', 'more slowly than usual', 'in a hurry',
  'with the air of a man who had done it a hundred times', 'half in jest', 'reluctantly', 'in silence',
];
const WEATHER = [
  'The wind had backed into the south-west and was rising',
  'A thin rain drifted in from the sea',
  'The fog lay so thick on the water that the foghorn sounded every minute',
  'It was a clear, cold morning, and the smoke from the chimneys rose straight up',
  'The swell was running high against the rocks at the harbour mouth',
  'Snow had fallen in the night, which was rare so close to the sea',
  'The sun came out for an hour and the slate roofs steamed',
  'Gulls wheeled and screamed over the fish market',
];
const THOUGHTS = [
  'nobody in the town could remember a year like it',
  'the ferry would not cross again before Thursday',
  'the price of coal had doubled since Michaelmas',
  'someone had been reading the letters before they were delivered',
  'the new road would change everything, for better or worse',
  'the lighthouse had been dark for three nights running',
  'the accounts did not add up, and had not for some time',
  'the surveyor was not who he claimed to be',
  'the old quarrel between the two families was not over',
  'there would be work on the boats again by the spring',
];
const SPEECH = [
  '“We shall see,” said {p}, “what the morning brings.”',
  '“It was never like this in my father’s day,” said {p}.',
  '“You had better come inside before you catch your death,” said {p}.',
  '“Leave it with me,” said {p}, “and say nothing to anyone.”',
  '“There’s weather coming,” said {p}. “I can feel it in my knees.”',
  '“I counted them twice,” said {p}, “and there are still two missing.”',
  '“The ferry will run,” said {p}, “whatever the company says.”',
];

function pick<T>(random: () => number, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)]!;
}

const capitalise = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

/** One sentence. */
function sentence(random: () => number): string {
  const person = pick(random, PEOPLE);
  const pronoun = PRONOUN[person] ?? 'he';
  switch (Math.floor(random() * 7)) {
    case 0:
      return `${pick(random, TIMES)}, ${person} ${pick(random, VERBS_PAST)} ${pick(random, OBJECTS)} ${pick(random, PLACES)}.`;
    case 1:
      return `${pick(random, WEATHER)}, and ${person} ${pick(random, VERBS_PAST)} ${pick(random, OBJECTS)} ${pick(random, FEELINGS)}.`;
    case 2:
      return `${capitalise(person)} was quite certain that ${pick(random, THOUGHTS)}.`;
    case 3:
      return pick(random, SPEECH).replace('{p}', person);
    case 4:
      return `${capitalise(person)} ${pick(random, VERBS_PAST)} ${pick(random, OBJECTS)} ${pick(random, PLACES)}, and then ${pronoun} ${pick(random, VERBS_PAST)} ${pick(random, OBJECTS)} ${pick(random, FEELINGS)}.`;
    case 5:
      return `${pick(random, WEATHER)}; ${pick(random, PLACES)} ${pick(random, PEOPLE)} stood for a long while, thinking that ${pick(random, THOUGHTS)}.`;
    default:
      return `It was said ${pick(random, PLACES)} that ${pick(random, THOUGHTS)}, though ${person} would not hear of it.`;
  }
}

/** A paragraph of `min`..`max` sentences. */
export function paragraph(random: () => number, min = 4, max = 8): string {
  const count = min + Math.floor(random() * (max - min + 1));
  return Array.from({ length: count }, () => sentence(random)).join(' ');
}

/** `count` paragraphs from a fresh generator seeded with `seed`. */
export function paragraphs(seed: number, count: number, min = 4, max = 8): string[] {
  const random = seededRandom(seed);
  return Array.from({ length: count }, () => paragraph(random, min, max));
}

export { seededRandom };
