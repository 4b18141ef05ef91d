/**
 * The people-search filters, and what each source can honour. A source never ignores a filter
 * it cannot apply: it answers nothing and says which filter it could not use, so that a row
 * is never returned that the caller's filters would have excluded.
 */
import type { Filter } from '../store/port.ts';
import type { InputOf } from '../../shared/operations/index.ts';
import { words } from '../lib/text.ts';
import { normalizeDomain } from '../enrich/enrich-record.ts';
import type { PersonDoc } from './people.ts';

export type PeopleFilters = Omit<InputOf<'searchPeople'>, 'limit' | 'sourceOrder' | 'cursor'>;
export type FilterName = keyof PeopleFilters;

/** The filters set in a request (empty strings and lists do not count). */
export function filtersSet(filters: PeopleFilters): FilterName[] {
  return (Object.keys(filters) as FilterName[]).filter((name) => {
    const value = filters[name];
    return Array.isArray(value) ? value.length > 0 : typeof value === 'string' && value.trim() !== '';
  });
}

/** The first filter set that `supported` lacks, if any. */
export function unsupported(filters: PeopleFilters, supported: readonly FilterName[]): FilterName | undefined {
  return filtersSet(filters).find((name) => !supported.includes(name));
}

const SIZE_RANGES: Record<string, [number, number]> = {
  '1-10': [1, 10],
  '11-50': [11, 50],
  '51-200': [51, 200],
  '201-500': [201, 500],
  '501-1000': [501, 1000],
  '1001-5000': [1001, 5000],
  '5001-10000': [5001, 10000],
  '10001+': [10001, Number.MAX_SAFE_INTEGER],
};

/** Every word of the filter must be among the field's words. */
function allWords(field: string, text: string | undefined): Filter<PersonDoc>[] {
  const terms = words(text);
  return terms.length > 0 ? [{ [field]: { $all: terms } } as Filter<PersonDoc>] : [];
}

/** Lists and the demo set hold every field, so they honour every filter. */
export function listQuery(filters: PeopleFilters): Filter<PersonDoc>[] {
  const f = filters;
  const clauses: Filter<PersonDoc>[] = [
    ...allWords('search.title', f.jobTitle),
    ...allWords('search.company', f.company),
    ...allWords('search.industry', f.industry),
    ...allWords('search.industry', f.personIndustry),
    ...allWords('search.skills', f.skills),
    ...allWords('search.location', f.location),
    ...allWords('search.companyLocation', f.companyLocation),
    ...allWords('search.languages', f.language),
  ];
  if (f.domain?.trim()) clauses.push({ domain: normalizeDomain(f.domain) });
  if (f.revenueRange?.trim()) clauses.push({ revenueRange: f.revenueRange.trim() });
  if (f.seniorities?.length) clauses.push({ seniority: { $in: f.seniorities } });
  if (f.roles?.length) clauses.push({ department: { $in: f.roles } });
  if (f.emailStatuses?.length) clauses.push({ emailStatus: { $in: f.emailStatuses } });
  if (f.technologies?.length) {
    const techs = f.technologies.flatMap((t) => words(t).join(' ') || []);
    if (techs.length) clauses.push({ $or: techs.map((t) => ({ 'search.technologies': { $all: t.split(' ') } })) });
  }
  if (f.companySizes?.length) {
    clauses.push({
      $or: f.companySizes.map((size) => {
        const [min, max] = SIZE_RANGES[size]!;
        return { companySize: { $gte: min, $lte: max } };
      }),
    });
  }
  return clauses;
}

/** Apollo's `organization_num_employees_ranges` form: `11,50`. */
export const apolloSizeRange = (size: string) => {
  const [min, max] = SIZE_RANGES[size]!;
  return max === Number.MAX_SAFE_INTEGER ? `${min},` : `${min},${max}`;
};
