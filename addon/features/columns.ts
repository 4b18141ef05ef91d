/**
 * Which columns of a sheet hold what, recognised by their header in English, Portuguese or
 * Spanish, case- and accent-insensitively.
 */
export type InputField = 'email' | 'linkedinUrl' | 'fullName' | 'firstName' | 'lastName' | 'companyName' | 'companyDomain' | 'cnpj' | 'phone';

const fold = (text: string) =>
  text
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, ' ')
    .trim();

const ALIASES: Record<InputField, string[]> = {
  email: ['email', 'e mail', 'work email', 'email address', 'correo', 'correo electronico', 'endereco de email'],
  linkedinUrl: ['linkedin', 'linkedin url', 'linkedin profile', 'perfil linkedin', 'perfil do linkedin', 'perfil de linkedin'],
  fullName: ['name', 'full name', 'contact', 'nome', 'nome completo', 'contato', 'nombre', 'nombre completo', 'contacto'],
  firstName: ['first name', 'firstname', 'primeiro nome', 'nombre de pila', 'primer nombre'],
  lastName: ['last name', 'lastname', 'surname', 'sobrenome', 'apellido', 'apellidos'],
  companyName: ['company', 'company name', 'organization', 'account', 'empresa', 'nome da empresa', 'compania', 'organizacion', 'razao social'],
  companyDomain: ['domain', 'website', 'company domain', 'company website', 'site', 'web', 'url', 'dominio', 'sitio web'],
  cnpj: ['cnpj', 'cnpj da empresa'],
  phone: ['phone', 'telephone', 'mobile', 'telefone', 'celular', 'whatsapp', 'telefono', 'movil'],
};

/** Input field → its column (1-based), for the headers that name one. */
export function recogniseColumns(headers: string[]): Partial<Record<InputField, number>> {
  const found: Partial<Record<InputField, number>> = {};
  headers.forEach((header, i) => {
    const key = fold(header);
    for (const [field, names] of Object.entries(ALIASES) as Array<[InputField, string[]]>) {
      if (names.includes(key) && found[field] === undefined) found[field] = i + 1;
    }
  });
  return found;
}

export const sameLabel = (a: string, b: string) => fold(a) === fold(b);
