#!/bin/sh
# Makes a private CA and one server certificate it signed, for NATS, Postgres and the API on
# the wire (docker-compose.yml runs this once into its `certs` volume). Keeps what exists.
#   infra/certs/make-certs.sh DIR [HOSTNAME ...]
# DIR gets ca.pem (give it to clients: NATS_TLS_CA, sslrootcert=), ca.key, and server.pem /
# server.key for the hostnames given plus localhost and 127.0.0.1.
set -eu
dir=${1:?usage: make-certs.sh DIR [HOSTNAME ...]}
shift
mkdir -p "$dir"
cd "$dir"
if [ -s server.pem ] && [ -s server.key ] && [ -s ca.pem ]; then
  echo "certificates already in $dir"
  exit 0
fi
san="DNS:localhost,IP:127.0.0.1"
for name in "$@"; do san="$san,DNS:$name"; done
openssl req -x509 -newkey rsa:2048 -nodes -days 825 -subj "/CN=tracehub CA" -keyout ca.key -out ca.pem 2>/dev/null
openssl req -newkey rsa:2048 -nodes -subj "/CN=${1:-localhost}" -keyout server.key -out server.csr 2>/dev/null
printf 'subjectAltName=%s\nextendedKeyUsage=serverAuth\n' "$san" > server.ext
openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 825 -extfile server.ext \
  -out server.pem 2>/dev/null
rm -f server.csr server.ext ca.srl
chmod 600 ca.key server.key
chmod 644 ca.pem server.pem
echo "made ca.pem and server.pem ($san) in $dir"
