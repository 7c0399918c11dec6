/*
 * sha256.c - SHA-256 as specified in FIPS 180-4, section 6.2.
 *
 * Used for cache keys (hash of the generated source, flags, compiler
 * identity, versions, backend) and to verify cached objects before they
 * are loaded.  Input: bytes, in any number of update calls.  Output: the
 * 32-byte digest.  Invariant: nblock < 64 between calls; a block is
 * compressed as soon as it is full.  tilec_sha256_hex is the public face
 * (tilec_runtime.h): tile programs and tuning records name their source
 * by it, matching `sha256sum FILE`.
 */
#include "runtime_int.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

/* The first 32 bits of the fractional parts of the cube roots of the first
 * 64 primes (FIPS 180-4, 4.2.2). */
static const uint32_t round_k[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1,
	0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
	0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
	0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
	0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
	0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
	0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
	0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
	0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static uint32_t
rotr(uint32_t x, int n)
{
	return (x >> n) | (x << (32 - n));
}

/* Compress one 64-byte block into the state (FIPS 180-4, 6.2.2). */
static void
compress(uint32_t h[8], const uint8_t block[64])
{
	uint32_t w[64];
	for (int t = 0; t < 16; t++)
		w[t] = (uint32_t)block[4 * t] << 24 |
		       (uint32_t)block[4 * t + 1] << 16 |
		       (uint32_t)block[4 * t + 2] << 8 | (uint32_t)block[4 * t + 3];
	for (int t = 16; t < 64; t++) {
		uint32_t s0 = rotr(w[t - 15], 7) ^ rotr(w[t - 15], 18) ^
			      (w[t - 15] >> 3);
		uint32_t s1 = rotr(w[t - 2], 17) ^ rotr(w[t - 2], 19) ^
			      (w[t - 2] >> 10);
		w[t] = w[t - 16] + s0 + w[t - 7] + s1;
	}
	uint32_t a = h[0], b = h[1], c = h[2], d = h[3];
	uint32_t e = h[4], f = h[5], g = h[6], hh = h[7];
	for (int t = 0; t < 64; t++) {
		uint32_t sig1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25);
		uint32_t ch = (e & f) ^ (~e & g);
		uint32_t t1 = hh + sig1 + ch + round_k[t] + w[t];
		uint32_t sig0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22);
		uint32_t maj = (a & b) ^ (a & c) ^ (b & c);
		uint32_t t2 = sig0 + maj;
		hh = g;
		g = f;
		f = e;
		e = d + t1;
		d = c;
		c = b;
		b = a;
		a = t1 + t2;
	}
	h[0] += a;
	h[1] += b;
	h[2] += c;
	h[3] += d;
	h[4] += e;
	h[5] += f;
	h[6] += g;
	h[7] += hh;
}

void
tilec_rt_sha256_init(TilecSha256 *s)
{
	/* The first 32 bits of the fractional parts of the square roots of
	 * the first 8 primes (FIPS 180-4, 5.3.3). */
	static const uint32_t h0[8] = {
		0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
		0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
	};
	memcpy(s->h, h0, sizeof h0);
	s->nbytes = 0;
	s->nblock = 0;
}

void
tilec_rt_sha256_update(TilecSha256 *s, const void *data, size_t n)
{
	const uint8_t *p = data;
	s->nbytes += n;
	if (s->nblock > 0) {
		size_t take = 64 - s->nblock < n ? 64 - s->nblock : n;
		memcpy(s->block + s->nblock, p, take);
		s->nblock += take;
		p += take;
		n -= take;
		if (s->nblock < 64)
			return;
		compress(s->h, s->block);
		s->nblock = 0;
	}
	for (; n >= 64; p += 64, n -= 64)
		compress(s->h, p);
	memcpy(s->block, p, n);
	s->nblock = n;
}

void
tilec_rt_sha256_final(TilecSha256 *s, uint8_t digest[32])
{
	/* Padding (5.1.1): a 1 bit, zeros to 56 mod 64, the bit length. */
	uint64_t bits = s->nbytes * 8;
	s->block[s->nblock++] = 0x80;
	if (s->nblock > 56) {
		memset(s->block + s->nblock, 0, 64 - s->nblock);
		compress(s->h, s->block);
		s->nblock = 0;
	}
	memset(s->block + s->nblock, 0, 56 - s->nblock);
	for (int i = 0; i < 8; i++)
		s->block[56 + i] = (uint8_t)(bits >> (56 - 8 * i));
	compress(s->h, s->block);
	for (int i = 0; i < 8; i++) {
		digest[4 * i] = (uint8_t)(s->h[i] >> 24);
		digest[4 * i + 1] = (uint8_t)(s->h[i] >> 16);
		digest[4 * i + 2] = (uint8_t)(s->h[i] >> 8);
		digest[4 * i + 3] = (uint8_t)s->h[i];
	}
	tilec_rt_sha256_init(s);
}

void
tilec_rt_sha256_hex(const uint8_t digest[32], char hex[65])
{
	static const char digits[] = "0123456789abcdef";
	for (int i = 0; i < 32; i++) {
		hex[2 * i] = digits[digest[i] >> 4];
		hex[2 * i + 1] = digits[digest[i] & 15];
	}
	hex[64] = '\0';
}

void
tilec_rt_sha256(const void *data, size_t n, uint8_t digest[32])
{
	TilecSha256 s;
	tilec_rt_sha256_init(&s);
	tilec_rt_sha256_update(&s, data, n);
	tilec_rt_sha256_final(&s, digest);
}

bool
tilec_rt_sha256_fd(int fd, uint64_t limit, uint8_t digest[32], uint64_t *size)
{
	TilecSha256 s;
	tilec_rt_sha256_init(&s);
	uint8_t chunk[65536];
	bool ok = true;
	for (;;) {
		ssize_t n = read(fd, chunk, sizeof chunk);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || s.nbytes + (uint64_t)n > limit)
			ok = false;
		if (n <= 0 || !ok)
			break;
		tilec_rt_sha256_update(&s, chunk, (size_t)n);
	}
	if (size)
		*size = s.nbytes;
	tilec_rt_sha256_final(&s, digest);
	return ok;
}

void
tilec_sha256_hex(const void *data, size_t n, char hex[65])
{
	uint8_t d[32];
	tilec_rt_sha256(data, n, d);
	tilec_rt_sha256_hex(d, hex);
}
