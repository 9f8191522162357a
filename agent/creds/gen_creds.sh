#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Test credentials for every backend: per credential a CA, a server leaf and a client leaf.
# Usage: gen_creds.sh OUTDIR    (writes OUTDIR/<credential>/{ca,server,client}.{crt,key})
#
# Why these choices:
#  - CA: basicConstraints CA:TRUE + keyUsage keyCertSign (mbed TLS rejects a CA without them).
#  - Leaves: SAN DNS:tlsbench.test and NO keyUsage, so one certificate serves ECDHE (signature),
#    static ECDH (keyAgreement) and RSA key transport (keyEncipherment) suites alike.
#  - ecdh-rsa: a P-256 leaf signed by the rsa2048 CA (what the ECDH-RSA suites require).
#  - PKCS#8 PEM keys (genpkey's default): they load in mbed TLS, OpenSSL and wolfSSL.
#  - Keys are random per build (never committed); the recipe is what is reproducible.
set -euo pipefail

out=${1:?usage: gen_creds.sh OUTDIR}
days=10000
host=tlsbench.test
openssl=${OPENSSL:-openssl} # CMake passes the one it found
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

# genkey FILE ALG: ALG is rsa2048 | rsa3072 | p256 | p384 | ed25519
genkey() {
    case $2 in
        rsa*)    "$openssl" genpkey -quiet -algorithm RSA -pkeyopt "rsa_keygen_bits:${2#rsa}" -out "$1" ;;
        p256)    "$openssl" genpkey -quiet -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -pkeyopt ec_param_enc:named_curve -out "$1" ;;
        p384)    "$openssl" genpkey -quiet -algorithm EC -pkeyopt ec_paramgen_curve:P-384 -pkeyopt ec_param_enc:named_curve -out "$1" ;;
        ed25519) "$openssl" genpkey -quiet -algorithm ED25519 -out "$1" ;;
        *) echo "gen_creds.sh: unknown key type $2" >&2; exit 1 ;;
    esac
}

# digest ALG: the signature digest option (Ed25519 signs without a separate digest)
digest() {
    case $1 in
        p384) echo -sha384 ;;
        ed25519) ;;
        *) echo -sha256 ;;
    esac
}

# make_ca DIR ALG NAME
make_ca() {
    genkey "$1/ca.key" "$2"
    "$openssl" req -new -x509 -config "$tmp/x509.cnf" -extensions ca $(digest "$2") -days $days \
        -key "$1/ca.key" -subj "/O=tlsbench/CN=tlsbench test CA $3" -set_serial 1 -out "$1/ca.crt"
}

# make_leaf DIR ROLE KEYALG CADIR CAALG SERIAL NAME
make_leaf() {
    genkey "$1/$2.key" "$3"
    "$openssl" req -new -config "$tmp/x509.cnf" -key "$1/$2.key" \
        -subj "/O=tlsbench/CN=$host $2 $7" -out "$tmp/$2.csr"
    "$openssl" x509 -req -in "$tmp/$2.csr" -CA "$4/ca.crt" -CAkey "$4/ca.key" $(digest "$5") \
        -days $days -set_serial "$6" -extfile "$tmp/x509.cnf" -extensions leaf -out "$1/$2.crt" 2>/dev/null
}

# credential  key-alg  (CA from the same credential unless a fourth column names another)
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
    "$openssl" verify -CAfile "$dir/ca.crt" "$dir/server.crt" "$dir/client.crt" >/dev/null
done <<LIST
rsa2048 rsa2048
rsa3072 rsa3072
ecdsa-p256 p256
ecdsa-p384 p384
ed25519 ed25519
ecdh-rsa p256 rsa2048
LIST
