/**
 * `{% increment %}` and `{% decrement %}` with counters of their own, as Shopify's Liquid keeps
 * them ("independent from variables created through assign or capture").
 *
 * LiquidJS's own tags keep counters in the render's data scope (`context.environments`): a counter
 * named like a data field started from the field's value and changed what `{{ field }}` printed,
 * and `{% increment data %}` replaced the whole of `data` with 0, though a template only reads its
 * data (docs/templates.md). Here a counter starts at 0 whatever the data or `assign` hold
 * (increment prints 0, 1, 2...; decrement -1, -2...), and changes neither. `{{ name }}` still reads
 * a counter where no data field and no assigned variable has its name, as templates written for
 * LiquidJS expect: counters are the lowest scope, below the data.
 */
import { Tag, type Context, type Emitter, type Liquid, type TagToken, type TopLevelToken } from 'liquidjs';

/** The register (LiquidJS's per-render storage for tags) that holds a render's counters. */
const COUNTERS = 'pdfapi.counters';

/**
 * The counters of this render of a source: made on first use, fresh for each source (LiquidJS makes
 * a Context per render). They become the Context's globals, the scope LiquidJS falls back to for a
 * name neither an assigned variable nor the data has (Context.findScope), so they are readable
 * without hiding anything. The engine configures no globals; whatever it might are kept.
 */
function countersOf(context: Context): Record<string, number> {
  let counters = context.getRegister<Record<string, number> | undefined>(COUNTERS);
  if (counters === undefined) {
    // No prototype: a counter called __proto__ or constructor is a counter like any other.
    counters = Object.assign(Object.create(null) as Record<string, number>, context.globals);
    context.globals = counters;
    context.setRegister(COUNTERS, counters);
  }
  return counters;
}

/** `{% increment name %}` prints the counter, then adds one; `{% decrement name %}` subtracts one, then prints it. */
function counterTag(step: 1 | -1) {
  return class CounterTag extends Tag {
    private readonly variable: string;
    constructor(token: TagToken, remainTokens: TopLevelToken[], liquid: Liquid) {
      super(token, remainTokens, liquid);
      this.variable = this.tokenizer.readIdentifier().content;
    }
    render(context: Context, emitter: Emitter): void {
      const counters = countersOf(context);
      const before = Object.hasOwn(counters, this.variable) ? counters[this.variable]! : 0;
      counters[this.variable] = before + step;
      emitter.write(String(step === 1 ? before : before + step));
    }
  };
}

/** Registers `increment` and `decrement` on `liquid` in place of LiquidJS's own. */
export function registerCounterTags(liquid: Liquid): void {
  liquid.registerTag('increment', counterTag(1));
  liquid.registerTag('decrement', counterTag(-1));
}
