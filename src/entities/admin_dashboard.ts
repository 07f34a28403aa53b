/**
 * The Admin::Measure, Admin::Dimension and Admin::Cohort entities (Mastodon's
 * REST::Admin::MeasureSerializer, DimensionSerializer, CohortSerializer): numbers as strings,
 * except a cohort's `rate`.
 */

/** A measure as services/admin/measures.ts computes it. */
export interface MeasureInput {
  key: string;
  unit: string | null;
  total: number;
  humanValue?: string;
  /** Absent where the total is all time. */
  previousTotal?: number;
  data: ReadonlyArray<{ date: string; value: number }>;
}

export interface DimensionInput {
  key: string;
  data: ReadonlyArray<{ key: string; human_key: string; value: string; unit?: string; human_value?: string }>;
}

export interface CohortInput {
  period: string;
  frequency: "day" | "month";
  data: ReadonlyArray<{ date: string; rate: number; value: number }>;
}

export interface AdminMeasureJson {
  key: string;
  unit: string | null;
  total: string;
  human_value?: string;
  previous_total?: string;
  data: Array<{ date: string; value: string }>;
}

export function serializeMeasure(measure: MeasureInput): AdminMeasureJson {
  return {
    key: measure.key,
    unit: measure.unit,
    total: String(measure.total),
    ...(measure.humanValue !== undefined ? { human_value: measure.humanValue } : {}),
    ...(measure.previousTotal !== undefined ? { previous_total: String(measure.previousTotal) } : {}),
    data: measure.data.map((d) => ({ date: d.date, value: String(d.value) })),
  };
}

export function serializeDimension(dimension: DimensionInput) {
  return { key: dimension.key, data: dimension.data.map((d) => ({ ...d })) };
}

export function serializeCohort(cohort: CohortInput) {
  return {
    period: cohort.period,
    frequency: cohort.frequency,
    data: cohort.data.map((d) => ({ date: d.date, rate: d.rate, value: String(d.value) })),
  };
}
