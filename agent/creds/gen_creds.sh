#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Test credentials for every backend: per credential a CA, a server leaf and a client leaf.
# Usage: gen_creds.sh OUTDIR    (writes OUTDIR/<credential>/{ca,server,client}.{crt,key,pub})
# The recipe that made the committed ones (agent/creds/fixed/): the build embeds those, never
# fresh keys, so two builds give the same images and counts. `make creds` runs it again into
# agent/creds/fixed/ (new keys: every count that depends on a key or signature moves).
#
# Why these choices:
#  - CA: basicConstraints CA:TRUE + keyUsage keyCertSign (mbed TLS rejects a CA without them).
#  - Leaves: SAN DNS:tlsbench.test and NO keyUsage, so one certificate serves ECDHE (signature),
#    static ECDH (keyAgreement) and RSA key transport (keyEncipherment) suites alike.
#  - ecdh-rsa: a P-256 leaf signed by the rsa2048 CA (what the ECDH-RSA suites require).
#  - PKCS#8 PEM keys (genpkey's default): they load in mbed TLS, OpenSSL and wolfSSL.
#  - Validity: 10000 days from the day they are made (the committed ones: 2026-11-28 to
#    2054-04-15); the device checks no dates, host libraries do (counting runs at 2030-01-01).
#  - ML-DSA (FIPS 204) chains need an openssl command >= 3.5 (Debian 12's is 3.0): made only
#    when OPENSSL_PQ names one (`make creds` passes the cached openssl@3.5's), with the same
#    recipe; without it the ML-DSA chains in OUTDIR are left as they are.
set -euo pipefail

out=${1:?usage: gen_creds.sh OUTDIR}
days=10000
host=tlsbench.test
openssl=${OPENSSL:-openssl} # the classic chains: any openssl command (Debian 12: 3.0)
openssl_pq=${OPENSSL_PQ:-}  # an openssl >= 3.5, or empty: no ML-DSA credentials
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# A minimal OpenSSL config: no default extensions sneak in from the system openssl.cnf.
cat >"$tmp/x509.cnf" <<CNF
[req]
distinguished_name = dn
prompt = no
[dn]
CN = unused
[ca]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
[leaf]
basicConstraints = critical, CA:FALSE
subjectAltName = DNS:$host
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
CNF

# genkey FILE ALG: ALG is rsa2048 | rsa3072 | p256 | p384 | ed25519 | mldsa44 | mldsa65 | mldsa87
genkey() {
    case $2 in
        rsa*)    "$ossl" genpkey -quiet -algorithm RSA -pkeyopt "rsa_keygen_bits:${2#rsa}" -out "$1" ;;
        p256)    "$ossl" genpkey -quiet -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -pkeyopt ec_param_enc:named_curve -out "$1" ;;
        p384)    "$ossl" genpkey -quiet -algorithm EC -pkeyopt ec_paramgen_curve:P-384 -pkeyopt ec_param_enc:named_curve -out "$1" ;;
        ed25519) "$ossl" genpkey -quiet -algorithm ED25519 -out "$1" ;;
        mldsa*)  "$ossl" genpkey -quiet -algorithm "ML-DSA-${2#mldsa}" -out "$1" ;;
        *) echo "gen_creds.sh: unknown key type $2" >&2; exit 1 ;;
    esac
}

# digest ALG: the signature digest option (Ed25519 and ML-DSA sign without a separate digest)
digest() {
    case $1 in
        p384) echo -sha384 ;;
        ed25519|mldsa*) ;;
        *) echo -sha256 ;;
    esac
}

# make_ca DIR ALG NAME
make_ca() {
    genkey "$1/ca.key" "$2"
    "$ossl" req -new -x509 -config "$tmp/x509.cnf" -extensions ca $(digest "$2") -days $days \
        -key "$1/ca.key" -subj "/O=tlsbench/CN=tlsbench test CA $3" -set_serial 1 -out "$1/ca.crt"
}

# make_leaf DIR ROLE KEYALG CADIR CAALG SERIAL NAME
make_leaf() {
    genkey "$1/$2.key" "$3"
    "$ossl" req -new -config "$tmp/x509.cnf" -key "$1/$2.key" \
        -subj "/O=tlsbench/CN=$host $2 $7" -out "$tmp/$2.csr"
    "$ossl" x509 -req -in "$tmp/$2.csr" -CA "$4/ca.crt" -CAkey "$4/ca.key" $(digest "$5") \
        -days $days -set_serial "$6" -extfile "$tmp/x509.cnf" -extensions leaf -out "$1/$2.crt" 2>/dev/null
    # the leaf's SubjectPublicKeyInfo: what a raw-public-key peer (RFC 7250) sends instead
    "$ossl" pkey -in "$1/$2.key" -pubout -out "$1/$2.pub"
}

# make_credentials: one credential per input line: name, key algorithm, and the credential
# whose CA signs it (default: its own CA)
make_credentials() {
while read -r name alg ca_from; do
    dir="$out/$name"
    mkdir -p "$dir"
    if [ -z "$ca_from" ]; then
        make_ca "$dir" "$alg" "$name"
        ca_dir=$dir ca_alg=$alg
    else
        ca_dir="$out/$ca_from" ca_alg=${ca_from/ecdsa-/}
        cp "$ca_dir/ca.crt" "$dir/"
    fi
    make_leaf "$dir" server "$alg" "$ca_dir" "$ca_alg" 2 "$name"
    make_leaf "$dir" client "$alg" "$ca_dir" "$ca_alg" 3 "$name"
    "$ossl" verify -CAfile "$dir/ca.crt" "$dir/server.crt" "$dir/client.crt" >/dev/null
done
}

ossl=$openssl
make_credentials <<LIST
rsa2048 rsa2048
rsa3072 rsa3072
ecdsa-p256 p256
ecdsa-p384 p384
ed25519 ed25519
ecdh-rsa p256 rsa2048
LIST

if [ -z "$openssl_pq" ]; then
    echo "gen_creds.sh: no OPENSSL_PQ (an openssl >= 3.5): the ML-DSA credentials in $out are left as they are" >&2
else
    ossl=$openssl_pq
    make_credentials <<LIST
mldsa44 mldsa44
mldsa65 mldsa65
mldsa87 mldsa87
LIST
fi
