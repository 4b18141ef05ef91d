/** The add-on's limits and prices come from the operation registry, not from numbers of its own. */
import { describe, expect, it } from 'vitest';
import { limitOf, maxItems } from '../../addon/api/client.ts';
import { prices, searchLimits } from '../../addon/features/rules.ts';
import { operations } from '../../shared/operations/index.ts';

describe('limits from the schemas', () => {
  it('reads array sizes, string lengths and maximums, nested in arrays and records', () => {
    expect(maxItems('addProspects', 'rowIds')).toBe(25);
    expect(limitOf('upsertSheetRows', 'rows.[].values.*', 'maxLength')).toBe(5000);
    expect(limitOf('createSheet', 'name', 'maxLength')).toBe(120);
    expect(limitOf('aiColumn', '*', 'maxLength')).toBe(50_000);
    expect(limitOf('research', 'columns.[].value', 'maxLength')).toBe(50_000);
    expect(searchLimits()).toEqual({ people: 25, companies: 20 });
  });

  it('refuses a limit the schema does not declare', () => {
    expect(() => limitOf('hydratePeople', 'maxCredits', 'maxLength')).toThrow(/declares no maxLength/);
    expect(() => maxItems('createSheet', 'nope')).toThrow(/declares no maxItems/);
  });

  it("states the registry's prices", () => {
    const research = operations.research.credits;
    expect(prices()).toEqual({ companyRow: 1, exportRow: 1, change: 1, personRow: 1, cnpj: 1, aiColumn: operations.aiColumn.credits.cost, research: research.cost, researchWithWeb: research.costWith.cost });
  });
});
