/** What the add-on's features need from Apps Script, as small ports (addon/gas/ implements them). */
export interface PropertiesPort {
  get(key: string): string | null;
  set(key: string, value: string): void;
}
