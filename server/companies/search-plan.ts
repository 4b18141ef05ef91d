/**
 * Company search filters → one query on the `companies` collection. Every filter maps onto a
 * registry field (or a derived search key, see companies.ts); `industry` and `keywords` become
 * CNAE codes through the activity matcher, and a term that names no activity must then appear
 * in the company's name instead, so "software house" still finds "ACME SOFTWARE HOUSE LTDA".
 * Values a schema cannot judge (a CNAE code, a state, a size word) are checked here, with a 400
 * that names the field.
 */
import type { InputOf } from '../../shared/operations/index.ts';
import { ServiceError } from '../lib/errors.ts';
import type { Filter } from '../store/port.ts';
import type { Activity } from '../../shared/types.ts';
import type { ActivityMatcher } from './activities.ts';
import { normalizeCnpj } from '../../shared/cnpj.ts';
import type { CompanyDoc } from './company-record.ts';
import { foldText } from '../../shared/fold-text.ts';
import { words } from '../lib/text.ts';
import { codeDigits, SIZE_WORDS, STATES } from '../../shared/schemas/filter-patterns.ts';

export type CompanyFilters = Omit<InputOf<'searchCompanies'>, 'limit' | 'cursor'>;

export interface SearchPlan {
  filter: Filter<CompanyDoc>;
  /** The CNAE codes the activity filters stand for, with their descriptions. */
  activities: Activity[];
  /** Industry or keyword terms that named no activity and were matched against names instead. */
  nameTerms: string[];
}

export const UFS: ReadonlySet<string> = new Set(STATES);

function invalid(message: string): never {
  throw new ServiceError('invalid_request', message);
}

/** Each CNAE as 7 digits; a 2-, 4- or 5-digit prefix (division, group, class) stands for its subclasses. */
function cnaeCodes(cnaes: string[], matcher: ActivityMatcher): Activity[] {
  return cnaes.flatMap((raw, i) => {
    const code = codeDigits(raw);
    if (!/^\d+$/.test(code) || ![2, 4, 5, 7].includes(code.length)) {
      invalid(`cnaes[${i}] must be a CNAE code: 7 digits (6201-5/01), or a 2-, 4- or 5-digit division, group or class`);
    }
    if (code.length === 7) return [matcher.get(code) ?? { code, description: '' }];
    return matcher.byPrefix(code);
  });
}

function partnerDocument(raw: string): string {
  const masked = raw.trim().match(/^\*{3}(\d{6})\*{2}$/);
  if (masked) return raw.trim();
  const digits = raw.replace(/[.\-\/\s]/g, '');
  // Published CPFs hide their first 3 and last 2 digits, so a full CPF is searched by its middle six.
  if (/^\d{11}$/.test(digits)) return `***${digits.slice(3, 9)}**`;
  const cnpj = normalizeCnpj(raw);
  if (cnpj) return cnpj;
  return invalid('partnerDocument must be a CPF (11 digits, or masked as ***NNNNNN**) or a CNPJ');
}

/** "Curitiba, PR", "Curitiba - PR", "PR" or "Curitiba". */
function parseLocation(location: string): { city?: string; state?: string } {
  const parts = location.split(/[,\-\/]/).map((p) => p.trim()).filter(Boolean);
  const state = parts.find((p) => UFS.has(p.toUpperCase()) && p.length === 2);
  const city = parts.filter((p) => p !== state).join(' ');
  return { ...(state ? { state: state.toUpperCase() } : {}), ...(city ? { city: foldText(city) } : {}) };
}

/**
 * The words of a name to search, and the prefixes among them: a word written with a trailing `*`
 * (`padar*`), folded as the words are (letters and digits only, so a prefix is safe in a regular
 * expression). A prefix of one letter would match most of the registry: it counts as no word.
 */
function wordsAndPrefixes(text: string): { words: string[]; prefixes: string[] } {
  const prefixes: string[] = [];
  const plain = text.replace(/(\S+)\*(?=\s|$)/g, (_, stem: string) => {
    const stemWords = words(stem);
    const last = stemWords.pop();
    if (last !== undefined) prefixes.push(last);
    return ` ${stemWords.join(' ')} `;
  });
  return { words: words(plain), prefixes: [...new Set(prefixes)] };
}

export function planSearch(input: CompanyFilters, matcher: ActivityMatcher): SearchPlan {
  const filter: Record<string, unknown> = {};
  const nameWords = new Set<string>();
  const nameTerms: string[] = [];

  const namePrefixes: string[] = [];
  if (input.name !== undefined) {
    const found = wordsAndPrefixes(input.name);
    if (found.words.length + found.prefixes.length === 0) invalid('name must contain at least one word');
    found.words.forEach((w) => nameWords.add(w));
    namePrefixes.push(...found.prefixes);
  }

  const activities = new Map<string, Activity>();
  const terms = [...(input.industry !== undefined ? [input.industry] : []), ...(input.keywords ?? [])];
  for (const term of terms) {
    const matched = matcher.match(term);
    if (matched.length > 0) matched.forEach((a) => activities.set(a.code, a));
    else if (words(term).length > 0) {
      nameTerms.push(term);
      words(term).forEach((w) => nameWords.add(w));
    }
  }
  if (input.cnaes) for (const a of cnaeCodes(input.cnaes, matcher)) activities.set(a.code, a);
  // Explicit codes that stand for no known subclass must still narrow the search (to nothing).
  if (activities.size > 0 || input.cnaes) filter['search.activities'] = { $in: [...activities.keys()] };
  if (nameWords.size > 0) filter['search.name'] = { $all: [...nameWords] };
  const prefixed: Array<Record<string, unknown>> = [];
  // A prefix is a condition of its own: MongoDB's `$all` takes words, a regular expression per prefix matches any word of the array.
  for (const prefix of namePrefixes) prefixed.push({ 'search.name': { $regex: `^${prefix}` } });

  if (input.registrationStatuses) filter.registrationStatus = { $in: input.registrationStatuses };
  if (input.establishmentTypes) filter.establishment = { $in: input.establishmentTypes };

  const sizes = new Set<string>();
  input.fiscalSizes?.forEach((size) => SIZE_WORDS[size]!.forEach((code) => sizes.add(code)));
  input.sizes?.forEach((size, i) => {
    const word = size.toLowerCase();
    const codes = Object.hasOwn(SIZE_WORDS, word) ? SIZE_WORDS[word] : undefined;
    if (!codes) invalid(`sizes[${i}] must be one of micro, small, medium, large (or ME, EPP, demais)`);
    codes.forEach((code) => sizes.add(code));
  });
  if (sizes.size > 0) filter.fiscalSize = { $in: [...sizes].sort() };

  if (input.capitalMin !== undefined && input.capitalMax !== undefined && input.capitalMin > input.capitalMax) {
    invalid('capitalMin must not be greater than capitalMax');
  }
  if (input.capitalMin !== undefined || input.capitalMax !== undefined) {
    filter.capital = {
      ...(input.capitalMin !== undefined ? { $gte: input.capitalMin } : {}),
      ...(input.capitalMax !== undefined ? { $lte: input.capitalMax } : {}),
    };
  }
  if (input.openingDateMin && input.openingDateMax && input.openingDateMin > input.openingDateMax) {
    invalid('openingDateMin must not be after openingDateMax');
  }
  if (input.openingDateMin !== undefined || input.openingDateMax !== undefined) {
    filter.openingDate = {
      ...(input.openingDateMin !== undefined ? { $gte: input.openingDateMin } : {}),
      ...(input.openingDateMax !== undefined ? { $lte: input.openingDateMax } : {}),
    };
  }

  if (input.simpleOption !== undefined) filter.simplesOption = input.simpleOption;
  // Issue 22's filters.
  if (input.meiOption !== undefined) filter.meiOption = input.meiOption;
  if (input.partnerAgeBands) filter['search.partnerAgeBands'] = { $in: input.partnerAgeBands };
  if (input.federativeEntity !== undefined) {
    const entity = foldText(input.federativeEntity);
    if (entity === '') invalid('federativeEntity must contain a letter or digit');
    filter['search.federativeEntity'] = entity;
  }
  if (input.taxRegime) {
    const { regime, year } = input.taxRegime;
    filter['search.taxRegimes'] = year === undefined ? regime : `${regime}:${year}`;
  }
  if (input.hasPhone !== undefined) filter['search.hasPhone'] = input.hasPhone;
  if (input.hasEmail !== undefined) filter['search.hasEmail'] = input.hasEmail;

  const location = input.location !== undefined ? parseLocation(input.location) : {};
  if (input.location !== undefined && !location.city && !location.state) invalid('location must name a city or a state');
  const state = input.state?.toUpperCase();
  if (state !== undefined && !UFS.has(state)) invalid('state must be a Brazilian state code (UF) such as SP, or EX for abroad');
  if (state && location.state && state !== location.state) invalid('state and location name different states');
  if (state ?? location.state) filter['address.state'] = state ?? location.state;
  const city = input.city !== undefined ? foldText(input.city) : undefined;
  if (city === '') invalid('city must contain a letter or digit');
  if (city && location.city && city !== location.city) invalid('city and location name different cities');
  if (city ?? location.city) filter['search.city'] = city ?? location.city;

  if (input.partnerName !== undefined) {
    const found = wordsAndPrefixes(input.partnerName);
    if (found.words.length + found.prefixes.length === 0) invalid('partnerName must contain at least one word');
    if (found.words.length > 0) filter['search.partners'] = { $all: found.words };
    for (const prefix of found.prefixes) prefixed.push({ 'search.partners': { $regex: `^${prefix}` } });
  }
  if (prefixed.length > 0) filter.$and = prefixed;
  if (input.partnerDocument !== undefined) filter['search.partnerDocuments'] = partnerDocument(input.partnerDocument);
  if (input.legalNatureCodes) {
    filter['legalNature.code'] = {
      $in: input.legalNatureCodes.map((raw, i) => {
        const code = codeDigits(raw);
        if (!/^\d{4}$/.test(code)) invalid(`legalNatureCodes[${i}] must be a 4-digit legal nature code such as 2062 (206-2)`);
        return code;
      }),
    };
  }

  return {
    filter: filter as Filter<CompanyDoc>,
    activities: [...activities.values()].sort((a, b) => (a.code < b.code ? -1 : 1)),
    nameTerms,
  };
}
