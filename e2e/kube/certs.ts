// Throwaway PKI for one test cluster, made with the openssl CLI: a CA, the API server's serving
// certificate for 127.0.0.1, client certificates (CN = user, O = groups) and the service-account
// signing key pair. EC P-256 keys: generated in milliseconds and accepted by every component.
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

async function openssl(args: string[], cwd: string): Promise<void> {
  try {
    await run('openssl', args, { cwd });
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`openssl ${args[0]} failed: ${e.stderr || e.message}`);
  }
}

async function ecKey(dir: string, name: string): Promise<void> {
  await openssl(['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', `${name}.key`], dir);
}

export interface Pki {
  dir: string;
  caCert: string;
  caKey: string;
  serverCert: string;
  serverKey: string;
  saPublic: string;
  saPrivate: string;
}

export interface ClientCert {
  cert: string;
  key: string;
}

/** `extraSans`: more subjectAltName entries for the API server (`IP:...`, `DNS:...`), e.g. a real node's address. */
export async function makePki(dir: string, extraSans: string[] = []): Promise<Pki> {
  await ecKey(dir, 'ca');
  await openssl(['req', '-x509', '-new', '-key', 'ca.key', '-subj', '/CN=agentyard-test-ca', '-days', '2', '-out', 'ca.crt'], dir);

  await ecKey(dir, 'apiserver');
  await writeFile(
    join(dir, 'apiserver.ext'),
    [
      'basicConstraints=CA:FALSE',
      'keyUsage=digitalSignature,keyEncipherment',
      'extendedKeyUsage=serverAuth',
      `subjectAltName=${['IP:127.0.0.1', 'DNS:localhost', 'DNS:kubernetes', 'DNS:kubernetes.default', 'DNS:kubernetes.default.svc', 'IP:10.0.0.1', ...extraSans].join(',')}`,
      '',
    ].join('\n'),
  );
  await openssl(['req', '-new', '-key', 'apiserver.key', '-subj', '/CN=kube-apiserver', '-out', 'apiserver.csr'], dir);
  await signCsr(dir, 'apiserver');

  // kube-apiserver reads an RSA or EC key for service-account tokens; EC P-256 maps to ES256.
  await ecKey(dir, 'sa');
  await openssl(['ec', '-in', 'sa.key', '-pubout', '-out', 'sa.pub'], dir);

  return {
    dir,
    caCert: join(dir, 'ca.crt'),
    caKey: join(dir, 'ca.key'),
    serverCert: join(dir, 'apiserver.crt'),
    serverKey: join(dir, 'apiserver.key'),
    saPublic: join(dir, 'sa.pub'),
    saPrivate: join(dir, 'sa.key'),
  };
}

/** A client certificate: the API server takes CN as the user name and each O as a group. */
export async function makeClientCert(pki: Pki, name: string, user: string, groups: string[]): Promise<ClientCert> {
  const subject = `${groups.map((g) => `/O=${g}`).join('')}/CN=${user}`;
  await ecKey(pki.dir, name);
  await writeFile(
    join(pki.dir, `${name}.ext`),
    'basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth\n',
  );
  await openssl(['req', '-new', '-key', `${name}.key`, '-subj', subject, '-out', `${name}.csr`], pki.dir);
  await signCsr(pki.dir, name);
  return { cert: join(pki.dir, `${name}.crt`), key: join(pki.dir, `${name}.key`) };
}

/** A serving certificate signed by the PKI's CA, for `sans` (`DNS:*.example.test`, `IP:...`): e.g. an ingress's wildcard certificate. */
export async function makeServingCert(pki: Pki, name: string, sans: string[]): Promise<ClientCert> {
  await ecKey(pki.dir, name);
  await writeFile(
    join(pki.dir, `${name}.ext`),
    `basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\nsubjectAltName=${sans.join(',')}\n`,
  );
  await openssl(['req', '-new', '-key', `${name}.key`, '-subj', `/CN=${name}`, '-out', `${name}.csr`], pki.dir);
  await signCsr(pki.dir, name);
  return { cert: join(pki.dir, `${name}.crt`), key: join(pki.dir, `${name}.key`) };
}

async function signCsr(dir: string, name: string): Promise<void> {
  await openssl(
    ['x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-days', '2', '-extfile', `${name}.ext`, '-out', `${name}.crt`],
    dir,
  );
}
