// Prints the realm JSON (argv[2]) with the PEM private key (argv[3]) as its RS256 signing key: scripts/start-keycloak.sh.
import { readFileSync } from 'node:fs';

const [realmFile, keyFile] = process.argv.slice(2);
const realm = JSON.parse(readFileSync(realmFile, 'utf8'));
const privateKey = readFileSync(keyFile, 'utf8').trim();
const provider = (name, providerId, config) => ({
  name,
  providerId,
  subComponents: {},
  config: { priority: ['100'], enabled: ['true'], active: ['true'], ...config },
});
realm.components = {
  ...realm.components,
  'org.keycloak.keys.KeyProvider': [
    provider('svc-identity-key', 'rsa', { priority: ['1000'], algorithm: ['RS256'], keyUse: ['SIG'], privateKey: [privateKey] }),
    provider('hmac-generated', 'hmac-generated', { algorithm: ['HS512'] }),
    provider('aes-generated', 'aes-generated', {}),
  ],
};
process.stdout.write(JSON.stringify(realm, null, 2));
