/* SPDX-License-Identifier: Apache-2.0 */
/* The mbed TLS 3.6 functions traced as crypto operations: the ONE list. mbedtls3_crypto.c
 * expands it into __wrap_ functions; mbedtls3.cmake reads the symbol names from it for
 * the linker's --wrap flags. One line per function, always starting with "TB_WRAP(" (or
 * "TB_WRAP_PSA(" for a function returning psa_status_t):
 *   TB_WRAP(symbol, label (TB_L_ without prefix), (parameters), (arguments), traced-when)
 * Every symbol here is called across object files of the static libraries (checked with
 * nm -A; calls inside one object file are not wrapped). With MBEDTLS_USE_PSA_CRYPTO off
 * (Debian's and the library cache's build) TLS 1.2 uses the legacy modules as 2.28 does,
 * and TLS 1.3 uses PSA for its key share, its (EC)DHE and its HKDF:
 *   TLS 1.3 key share     mbedtls_ssl_tls13_generate_and_write_xxdh_key_exchange: one span
 *                         per share (psa_generate_key draws the private key, ~1 us, and
 *                         psa_export_public_key computes the public value: the scalar
 *                         multiplication, all but that microsecond)
 *   TLS 1.3 (EC)DHE       psa_raw_key_agreement > mbedtls_ecdh_calc_secret (EC groups)
 *   TLS 1.3 key schedule  PSA HKDF calls: HKDF-Extract computes its HMAC when the salt and
 *                         the secret are input, HKDF-Expand(-Label) when the output is read;
 *                         calls that only copy (info, an expand's key, an extract's output)
 *                         are not traced
 *   signatures            mbedtls_pk_sign_ext (TLS 1.3 CertificateVerify), mbedtls_pk_sign
 *                         (TLS 1.2 ServerKeyExchange), mbedtls_pk_sign_restartable (TLS 1.2
 *                         client CertificateVerify); verifies likewise, and
 *                         mbedtls_x509_crt_verify_restartable > mbedtls_pk_verify_ext (chain) */
/* no include guard: an X-macro list, expanded once per definition of TB_WRAP */
TB_WRAP(mbedtls_ssl_tls13_generate_and_write_xxdh_key_exchange, KEY_GENERATE, (mbedtls_ssl_context *ssl, uint16_t named_group, unsigned char *buf, unsigned char *end, size_t *out_len), (ssl, named_group, buf, end, out_len), 1)
TB_WRAP_PSA(psa_raw_key_agreement, SHARED_SECRET, (psa_algorithm_t alg, mbedtls_svc_key_id_t private_key, const uint8_t *peer_key, size_t peer_key_length, uint8_t *output, size_t output_size, size_t *output_length), (alg, private_key, peer_key, peer_key_length, output, output_size, output_length), 1)
TB_WRAP_PSA(psa_key_derivation_input_bytes, KDF, (psa_key_derivation_operation_t *operation, psa_key_derivation_step_t step, const uint8_t *data, size_t data_length), (operation, step, data, data_length), tb_kdf_input_computes(operation, step))
TB_WRAP_PSA(psa_key_derivation_output_bytes, KDF, (psa_key_derivation_operation_t *operation, uint8_t *output, size_t output_length), (operation, output, output_length), tb_kdf_output_computes(operation))
TB_WRAP(mbedtls_ecdh_make_params, ECDH_MAKE_PARAMS, (mbedtls_ecdh_context *ctx, size_t *olen, unsigned char *buf, size_t blen, tb_rng_fn f_rng, void *p_rng), (ctx, olen, buf, blen, f_rng, p_rng), 1)
TB_WRAP(mbedtls_ecdh_read_params, ECDH_READ_PARAMS, (mbedtls_ecdh_context *ctx, const unsigned char **buf, const unsigned char *end), (ctx, buf, end), 1)
TB_WRAP(mbedtls_ecdh_make_public, ECDH_MAKE_PUBLIC, (mbedtls_ecdh_context *ctx, size_t *olen, unsigned char *buf, size_t blen, tb_rng_fn f_rng, void *p_rng), (ctx, olen, buf, blen, f_rng, p_rng), 1)
TB_WRAP(mbedtls_ecdh_read_public, ECDH_READ_PUBLIC, (mbedtls_ecdh_context *ctx, const unsigned char *buf, size_t blen), (ctx, buf, blen), 1)
TB_WRAP(mbedtls_ecdh_calc_secret, ECDH_CALC_SECRET, (mbedtls_ecdh_context *ctx, size_t *olen, unsigned char *buf, size_t blen, tb_rng_fn f_rng, void *p_rng), (ctx, olen, buf, blen, f_rng, p_rng), 1)
TB_WRAP(mbedtls_dhm_make_params, DHM_MAKE_PARAMS, (mbedtls_dhm_context *ctx, int x_size, unsigned char *output, size_t *olen, tb_rng_fn f_rng, void *p_rng), (ctx, x_size, output, olen, f_rng, p_rng), 1)
TB_WRAP(mbedtls_dhm_read_params, DHM_READ_PARAMS, (mbedtls_dhm_context *ctx, unsigned char **p, const unsigned char *end), (ctx, p, end), 1)
TB_WRAP(mbedtls_dhm_make_public, DHM_MAKE_PUBLIC, (mbedtls_dhm_context *ctx, int x_size, unsigned char *output, size_t olen, tb_rng_fn f_rng, void *p_rng), (ctx, x_size, output, olen, f_rng, p_rng), 1)
TB_WRAP(mbedtls_dhm_read_public, DHM_READ_PUBLIC, (mbedtls_dhm_context *ctx, const unsigned char *input, size_t ilen), (ctx, input, ilen), 1)
TB_WRAP(mbedtls_dhm_calc_secret, DHM_CALC_SECRET, (mbedtls_dhm_context *ctx, unsigned char *output, size_t output_size, size_t *olen, tb_rng_fn f_rng, void *p_rng), (ctx, output, output_size, olen, f_rng, p_rng), 1)
TB_WRAP(mbedtls_pk_sign, PK_SIGN, (mbedtls_pk_context *ctx, mbedtls_md_type_t md_alg, const unsigned char *hash, size_t hash_len, unsigned char *sig, size_t sig_size, size_t *sig_len, tb_rng_fn f_rng, void *p_rng), (ctx, md_alg, hash, hash_len, sig, sig_size, sig_len, f_rng, p_rng), 1)
TB_WRAP(mbedtls_pk_sign_restartable, PK_SIGN, (mbedtls_pk_context *ctx, mbedtls_md_type_t md_alg, const unsigned char *hash, size_t hash_len, unsigned char *sig, size_t sig_size, size_t *sig_len, tb_rng_fn f_rng, void *p_rng, mbedtls_pk_restart_ctx *rs_ctx), (ctx, md_alg, hash, hash_len, sig, sig_size, sig_len, f_rng, p_rng, rs_ctx), 1)
TB_WRAP(mbedtls_pk_sign_ext, PK_SIGN, (mbedtls_pk_type_t pk_type, mbedtls_pk_context *ctx, mbedtls_md_type_t md_alg, const unsigned char *hash, size_t hash_len, unsigned char *sig, size_t sig_size, size_t *sig_len, tb_rng_fn f_rng, void *p_rng), (pk_type, ctx, md_alg, hash, hash_len, sig, sig_size, sig_len, f_rng, p_rng), 1)
TB_WRAP(mbedtls_pk_verify, PK_VERIFY, (mbedtls_pk_context *ctx, mbedtls_md_type_t md_alg, const unsigned char *hash, size_t hash_len, const unsigned char *sig, size_t sig_len), (ctx, md_alg, hash, hash_len, sig, sig_len), 1)
TB_WRAP(mbedtls_pk_verify_restartable, PK_VERIFY, (mbedtls_pk_context *ctx, mbedtls_md_type_t md_alg, const unsigned char *hash, size_t hash_len, const unsigned char *sig, size_t sig_len, mbedtls_pk_restart_ctx *rs_ctx), (ctx, md_alg, hash, hash_len, sig, sig_len, rs_ctx), 1)
TB_WRAP(mbedtls_pk_verify_ext, PK_VERIFY, (mbedtls_pk_type_t type, const void *options, mbedtls_pk_context *ctx, mbedtls_md_type_t md_alg, const unsigned char *hash, size_t hash_len, const unsigned char *sig, size_t sig_len), (type, options, ctx, md_alg, hash, hash_len, sig, sig_len), 1)
#if defined(MBEDTLS_X509_CRT_PARSE_C) /* a PSK-only build verifies no chain */
TB_WRAP(mbedtls_x509_crt_verify_restartable, CHAIN_VERIFY, (mbedtls_x509_crt *crt, mbedtls_x509_crt *trust_ca, mbedtls_x509_crl *ca_crl, const mbedtls_x509_crt_profile *profile, const char *cn, uint32_t *flags, tb_vrfy_fn f_vrfy, void *p_vrfy, mbedtls_x509_crt_restart_ctx *rs_ctx), (crt, trust_ca, ca_crl, profile, cn, flags, f_vrfy, p_vrfy, rs_ctx), 1)
#endif
TB_WRAP(mbedtls_pk_encrypt, PK_ENCRYPT, (mbedtls_pk_context *ctx, const unsigned char *input, size_t ilen, unsigned char *output, size_t *olen, size_t osize, tb_rng_fn f_rng, void *p_rng), (ctx, input, ilen, output, olen, osize, f_rng, p_rng), 1)
TB_WRAP(mbedtls_pk_decrypt, PK_DECRYPT, (mbedtls_pk_context *ctx, const unsigned char *input, size_t ilen, unsigned char *output, size_t *olen, size_t osize, tb_rng_fn f_rng, void *p_rng), (ctx, input, ilen, output, olen, osize, f_rng, p_rng), 1)
TB_WRAP(mbedtls_ssl_derive_keys, DERIVE_KEYS, (mbedtls_ssl_context *ssl), (ssl), 1)
TB_WRAP(mbedtls_ssl_psk_derive_premaster, PSK_PREMASTER, (mbedtls_ssl_context *ssl, mbedtls_key_exchange_type_t key_ex), (ssl, key_ex), 1)
