/**
 * The commands' names and usage lines, apart from their implementations (commands.ts): `--help`,
 * a typo and a usage error answer from here without loading the server's modules, so the CLI
 * answers them at once.
 */
import { MAX_KEY_NAME } from '../../shared/key-name.ts';

const USAGES = {
  'workspace create': 'workspace create --name NAME [--plan trial|active|none]',
  'workspace list': 'workspace list  (every workspace: id, name, plan, balance, created)',
  'key create': `key create --workspace ID [--name NAME]  (a name says what uses the key, at most ${MAX_KEY_NAME} characters)`,
  'key list': 'key list --workspace ID',
  'key revoke': 'key revoke --workspace ID --key KEY_ID',
  'dashboard link': 'dashboard link --workspace ID  (a one-time sign-in link to the dashboard, valid for 10 minutes)',
  'member add': 'member add --workspace ID --subject SUB [--issuer ISS]  (an OAuth subject acts for the workspace; issuer: OAUTH_ISSUER)',
  'member list': 'member list --workspace ID',
  'member remove': 'member remove --workspace ID --subject SUB [--issuer ISS]  (its tokens and dashboard sessions end at once, and the keys it created on the dashboard are revoked)',
  'plan set': 'plan set --workspace ID --plan trial|active|none',
  'credits grant': 'credits grant --workspace ID --amount N [--note TEXT]',
  'import cnpj': 'import cnpj --dir DIR [--release YYYY-MM] [--force]  |  import cnpj --download [--release YYYY-MM|latest] [--dir DIR] [--force]  (--force: over a newer release)',
  'download cnpj': `download cnpj [--release YYYY-MM|latest] [--dir DIR]  (into DIR/YYYY-MM, DIR ./cnpj-releases by default; source: CNPJ_RELEASES_URL)`,
  'import people': 'import people --workspace ID --file people.csv [--list NAME]  (columns recognised by header, en/pt/es)',
  'provider-key set': 'provider-key set --workspace ID --provider ID [--key KEY]  (the workspace’s own key: calls cost no data credits; without --key, read from stdin, out of shell history)',
  'provider-key list': 'provider-key list --workspace ID',
  'provider-key delete': 'provider-key delete --workspace ID --provider ID',
  'generate cnpj': 'generate cnpj --dir DIR [--establishments N] [--seed N] [--release YYYY-MM] [--after YYYY-MM [--changes 0.02]]  (a synthetic release, to try the importer; with --after, the month after that one of the same seed, a share of it changed)',
  'seed demo': 'seed demo  (a demo workspace with credits, synthetic companies and people; again: a new key for it)',
  'backup': 'backup --out FILE  (the embedded store, consistent, also while the server runs; MongoDB: use mongodump)',
  'migrate': 'migrate  (converts a DATA_DIR written by the journal store of earlier versions to SQLite; a server does it at start too)',
  'restore': 'restore --from FILE  (replaces the embedded store in DATA_DIR; refused while the server runs)',
} as const;

export type CommandName = keyof typeof USAGES;

export const isCommand = (name: string): name is CommandName => Object.hasOwn(USAGES, name);

export function usage(): string {
  return ['Usage: prospecta <command> [options]', '', ...Object.values(USAGES).map((line) => `  ${line}`)].join('\n');
}
