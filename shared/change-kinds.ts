/**
 * The kinds of registry change and the company record's fields each compares (decisions.md,
 * "Registry changes"). Data only, without TypeBox: the import's worker threads hash these fields.
 */

/**
 * What can change about an establishment. `opened` and `removed`: present in one release only;
 * the others compare the fields named in CHANGE_FIELDS. A company-level kind (name, partners,
 * capital, size, simples, legalNature) is recorded on every establishment of the company.
 */
export const CHANGE_KINDS = [
  'opened',
  'removed',
  'status',
  'name',
  'address',
  'contact',
  'activity',
  'partners',
  'capital',
  'size',
  'simples',
  'legalNature',
] as const;
export type ChangeKind = (typeof CHANGE_KINDS)[number];

/** The company record's fields each kind compares (`fields` names them, as `Company` does). */
export const CHANGE_FIELDS = {
  status: ['registrationStatus', 'registrationStatusDate', 'registrationStatusReason'],
  name: ['name', 'tradeName'],
  address: ['address'],
  contact: ['phones', 'email'],
  activity: ['mainActivity', 'secondaryActivities'],
  partners: ['partners'],
  capital: ['capital'],
  size: ['size', 'fiscalSize'],
  simples: ['simples', 'mei'],
  legalNature: ['legalNature'],
} as const satisfies Record<Exclude<ChangeKind, 'opened' | 'removed'>, readonly string[]>;

