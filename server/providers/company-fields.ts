/** A registry company (imported or from BrasilAPI) as enrichment fields. */
import { REGISTRY_FIELDS } from '../../shared/schemas/enrichment.ts';
import type { CompanyRecord } from '../companies/company-record.ts';
import type { ProviderFields } from './fields.ts';

export const REGISTRY_COMPANY_OUTPUTS = ['companyName', ...REGISTRY_FIELDS] as const;

export function companyFields(record: CompanyRecord): ProviderFields {
  return {
    companyName: record.name,
    tradeName: record.tradeName,
    registrationStatus: record.registrationStatus,
    openingDate: record.openingDate,
    mainActivity: record.mainActivity,
    secondaryActivities: record.secondaryActivities,
    legalNature: record.legalNature,
    capital: record.capital,
    fiscalSize: record.fiscalSize,
    simplesOption: record.simplesOption,
    companyAddress: record.address,
    companyPhones: record.phones,
    companyEmail: record.email,
    partners: record.partners,
  };
}
