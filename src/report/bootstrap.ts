/**
 * Owner-level blocked analysis (design, "Phase 3"): calls and prompts of one owner are not
 * independent, so intervals come from a cluster bootstrap that resamples whole owners, with
 * replacement, within each cohort. Seeded (`pure-rand`'s xoroshiro128+), so a report's intervals
 * are the same on every run of the same input; quantiles from `simple-statistics`.
 */
import { uniformInt } from 'pure-rand/distribution/uniformInt';
import { xoroshiro128plus } from 'pure-rand/generator/xoroshiro128plus';
import { quantile } from 'simple-statistics';

/** One owner's prompts, as the statistic reads them. */
export type Cluster<T> = readonly T[];

/** A point estimate and its percentile interval. */
export interface Interval {
  readonly estimate: number;
  /** Lower bound of the two-sided interval. */
  readonly low: number;
  /** Upper bound of the two-sided interval. */
  readonly high: number;
}

/** Options of {@link clusterBootstrap}. */
export interface BootstrapOptions {
  /** Resamples. @defaultValue `1000` */
  readonly resamples?: number;
  /** Seed of the generator. @defaultValue `35` */
  readonly seed?: number;
  /** Two-sided confidence level. @defaultValue `0.95` */
  readonly level?: number;
}

/**
 * The statistic of two cohorts and its percentile interval from resampling owners (clusters) with
 * replacement, each cohort on its own (its number of owners kept). Replicates where the statistic
 * is not finite (an empty denominator) are left out of the interval.
 *
 * @param treatment - the treatment cohort's owners
 * @param control - the control cohort's owners
 * @param statistic - of the flattened prompts of each cohort
 * @returns estimate on the data as given, and the interval; `NaN` bounds when no replicate was finite
 */
export function clusterBootstrap<T>(
  treatment: readonly Cluster<T>[],
  control: readonly Cluster<T>[],
  statistic: (treatment: readonly T[], control: readonly T[]) => number,
  options: BootstrapOptions = {},
): Interval {
  const resamples = options.resamples ?? 1000;
  const level = options.level ?? 0.95;
  const rng = xoroshiro128plus(options.seed ?? 35);
  const estimate = statistic(treatment.flat(), control.flat());
  const draw = (clusters: readonly Cluster<T>[]): T[] => {
    const out: T[] = [];
    for (let i = 0; i < clusters.length; i++) {
      const c = clusters[uniformInt(rng, 0, clusters.length - 1)] as Cluster<T>;
      for (const x of c) out.push(x);
    }
    return out;
  };
  const replicates: number[] = [];
  for (let b = 0; b < resamples; b++) {
    const v = statistic(draw(treatment), draw(control));
    if (Number.isFinite(v)) replicates.push(v);
  }
  if (replicates.length === 0) return { estimate, low: Number.NaN, high: Number.NaN };
  const alpha = (1 - level) / 2;
  return { estimate, low: quantile(replicates, alpha), high: quantile(replicates, 1 - alpha) };
}

/** Share of `items` for which `hit` holds; `NaN` when there are none. */
export function rate<T>(items: readonly T[], hit: (t: T) => boolean): number {
  if (items.length === 0) return Number.NaN;
  let k = 0;
  for (const t of items) if (hit(t)) k++;
  return k / items.length;
}

/** Mean of `value` over `items`; `NaN` when there are none. */
export function meanOf<T>(items: readonly T[], value: (t: T) => number): number {
  if (items.length === 0) return Number.NaN;
  let sum = 0;
  for (const t of items) sum += value(t);
  return sum / items.length;
}

/** The `p` quantile of `value` over `items` (`simple-statistics`); `NaN` when there are none. */
export function quantileOf<T>(items: readonly T[], value: (t: T) => number, p: number): number {
  if (items.length === 0) return Number.NaN;
  return quantile(items.map(value), p);
}
