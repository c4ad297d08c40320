/*
 * test_key.c - hash, fibration and entry-key assignment (key.c), and the
 * two checksums (csum.c).
 *
 * Every constant below is a fact, not our own output: the vectors table
 * was printed by a throwaway program that called libreiser4 1.2.2's
 * factory (hash, fibre and key_large plugins: build(), build_hashed(),
 * reiser4_print_key()); checksum values come from its crc32c_le and
 * aux_adler32; the "image" cases were read off an image made with
 * mkfs.reiser4 -o create=reg40 and files created through libreiser4, as
 * shown by debugfs.reiser4 -t and a hex dump of the leaf.  Random cases
 * compare against bit-at-a-time references (seed printed, R4_SEED replays).
 */
#include "key.h"
#include "plugin.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "t.h"

/*
 * One name as libreiser4 sees it.  gen != 0: a generated name of len
 * bytes (see gen_name).  hash[] is each hash of the whole name (rupasov
 * of "" not taken: progs loops for ~2^40 steps there); fibre[] each raw
 * fibre number; el1[] the entry key's el1 under each fibration; el3[] its
 * el3 under each hash; print is the key under r5 + ext_1 in directory 0x2a.
 */
struct name_vec {
	const char *name;
	size_t len;
	int gen;
	uint64_t hash[R4_HASH_COUNT];
	uint8_t fibre[R4_FIBRE_COUNT];
	uint64_t el1[R4_FIBRE_COUNT];
	uint64_t el2;
	uint64_t el3[R4_HASH_COUNT];
	const char *print;
};

static const struct name_vec vecs[] = {
	{"", 0, 0,
	 {0x0000000000000000ull, 0x0000000000000000ull, 0xc5be814409b0d573ull,
	  0xcbf29ce484222325ull, 0xc0c0c0c010101010ull},
	 {0x00, 0x00, 0x00, 0x00},
	 {0x0000000000000000ull, 0x0000000000000000ull,
	  0x0000000000000000ull, 0x0000000000000000ull},
	 0x0000000000000000ull,
	 {0x0000000000000000ull, 0x0000000000000000ull, 0x0000000000000000ull,
	  0x0000000000000000ull, 0x0000000000000000ull},
	 "[2a:0(NAME):0:0:0]"},
	{"a", 1, 0,
	 {0x00000000003e5280ull, 0x00000000000042f2ull, 0xcc651ba83f18dad5ull,
	  0xaf63bd4c8601b7beull, 0xc0c0c0c010101010ull},
	 {0x00, 0x00, 0x00, 0x00},
	 {0x0061000000000000ull, 0x0061000000000000ull,
	  0x0061000000000000ull, 0x0061000000000000ull},
	 0x0000000000000000ull,
	 {0x0000000000000000ull, 0x0000000000000000ull, 0x0000000000000000ull,
	  0x0000000000000000ull, 0x0000000000000000ull},
	 "[2a:0(NAME):61000000000000:0:0]"},
	{"abcdefg", 7, 0,
	 {0x00000001a0902580ull, 0x00000007c8aad25aull, 0x2a8e1a0c1f76dc5aull,
	  0x1ba731016c18206full, 0xc0c0c0c010101010ull},
	 {0x00, 0x00, 0x00, 0x00},
	 {0x0061626364656667ull, 0x0061626364656667ull,
	  0x0061626364656667ull, 0x0061626364656667ull},
	 0x0000000000000000ull,
	 {0x0000000000000000ull, 0x0000000000000000ull, 0x0000000000000000ull,
	  0x0000000000000000ull, 0x0000000000000000ull},
	 "[2a:0(NAME):61626364656667:0:0]"},
	{"abcdefgh", 8, 0,
	 {0x0000001043718900ull, 0x000000559f5751a0ull, 0x43360df604a34fa9ull,
	  0x1538b46aacff1cf5ull, 0xc0c0c0c010101010ull},
	 {0x00, 0x00, 0x00, 0x00},
	 {0x0061626364656667ull, 0x0061626364656667ull,
	  0x0061626364656667ull, 0x0061626364656667ull},
	 0x6800000000000000ull,
	 {0x0000000000000000ull, 0x0000000000000000ull, 0x0000000000000000ull,
	  0x0000000000000000ull, 0x0000000000000000ull},
	 "[2a:0(NAME):61626364656667:6800000000000000:0]"},
	{"abcdefghijklmno", 15, 0,
	 {0x000033fa7652c180ull, 0x6373e1f3d9b996baull, 0x2e73ace84cd4ad5aull,
	  0x7c163a2938836297ull, 0xc0c0c0c010101010ull},
	 {0x00, 0x00, 0x00, 0x00},
	 {0x0061626364656667ull, 0x0061626364656667ull,
	  0x0061626364656667ull, 0x0061626364656667ull},
	 0x68696a6b6c6d6e6full,
	 {0x0000000000000000ull, 0x0000000000000000ull, 0x0000000000000000ull,
	  0x0000000000000000ull, 0x0000000000000000ull},
	 "[2a:0(NAME):61626364656667:68696a6b6c6d6e6f:0]"},
	{"abcdefghijklmnop", 16, 0,
	 {0x000036c89d0ba500ull, 0x45fab57a5af9c74bull, 0xefe1b1543b4e7964ull,
	  0x5d276b0b074086e5ull, 0xc0c0c0c010101010ull},
	 {0x00, 0x00, 0x00, 0x00},
	 {0x0061626364656667ull, 0x0061626364656667ull,
	  0x0061626364656667ull, 0x0061626364656667ull},
	 0x68696a6b6c6d6e6full,
	 {0x7000000000000000ull, 0x7000000000000000ull, 0x7000000000000000ull,
	  0x7000000000000000ull, 0x7000000000000000ull},
	 "[2a:0(NAME):61626364656667:68696a6b6c6d6e6f:7000000000000000]"},
	{"abcdefghijklmnop"
	 "qrstuvw", 23, 0,
	 {0x0000a4a87399dd80ull, 0x020351a56996b86aull, 0xc345e080bef2d880ull,
	  0x91fff5607660a15full, 0xc0c0c0c010101010ull},
	 {0x00, 0x00, 0x00, 0x00},
	 {0x0061626364656667ull, 0x0061626364656667ull,
	  0x0061626364656667ull, 0x0061626364656667ull},
	 0x68696a6b6c6d6e6full,
	 {0x7071727374757677ull, 0x7071727374757677ull, 0x7071727374757677ull,
	  0x7071727374757677ull, 0x7071727374757677ull},
	 "[2a:0(NAME):61626364656667:68696a6b6c6d6e6f:7071727374757677]"},
	{"abcdefghijklmnop"
	 "qrstuvwx", 24, 0,
	 {0x0000b91481d2c100ull, 0x1624821b897a3f5bull, 0x3d015af43ba6968full,
	  0x768f51e926323415ull, 0xc0c0c0c010101010ull},
	 {0x00, 0x00, 0x00, 0x00},
	 {0x0161626364656667ull, 0x0161626364656667ull,
	  0x0161626364656667ull, 0x0161626364656667ull},
	 0x68696a6b6c6d6e6full,
	 {0x000000544be7c100ull, 0x0000043f6322bc1dull, 0xe80df888ad117f6aull,
	  0xf6bb2a0cd1713d37ull, 0xc0c0c0c010101010ull},
	 "[2a:0(NAME):161626364656667:68696a6b6c6d6e6f:43f6322bc1d]"},
	{NULL, 100, 1,
	 {0x00016d6d2558d500ull, 0x1bbf4227a75542b4ull, 0x7a08bf8d05f2eb27ull,
	  0xd563159588106f49ull, 0xc0c0c0c010101010ull},
	 {0x00, 0x00, 0x00, 0x00},
	 {0x0161626364656667ull, 0x0161626364656667ull,
	  0x0161626364656667ull, 0x0161626364656667ull},
	 0x68696a6b6c6d6e6full,
	 {0x00016d6d255b8700ull, 0x1741af973ae9ce96ull, 0xbb9c6309ab8824d7ull,
	  0x0fe73a1361873c23ull, 0xc0c0c0c010101010ull},
	 "[2a:0(NAME):161626364656667:68696a6b6c6d6e6f:1741af973ae9ce96]"},
	{NULL, 255, 2,
	 {0x0000c231e8c08280ull, 0x6f0c40f51a3f25e1ull, 0x5ea13ad8d0ea16daull,
	  0xad062774aba12abbull, 0xc0c0c0c010101010ull},
	 {0x00, 0x00, 0x00, 0x00},
	 {0x0120272e353c434aull, 0x0120272e353c434aull,
	  0x0120272e353c434aull, 0x0120272e353c434aull},
	 0x51585f666d747b23ull,
	 {0x0000c231e8c7bf00ull, 0xbac837ab4b5396e4ull, 0xc387c196a5fdfad5ull,
	  0x91d69cb69ab947abull, 0xc0c0c0c010101010ull},
	 "[2a:0(NAME):120272e353c434a:51585f666d747b23:bac837ab4b5396e4]"},
	{NULL, 255, 3,
	 {0x000442c3f35c1b80ull, 0x8ab710a91c96f101ull, 0xc14831328467cc71ull,
	  0x6b0410e1c55845beull, 0xc0c0c0c010101010ull},
	 {0x00, 0x00, 0x00, 0x00},
	 {0x0180818283848586ull, 0x0180818283848586ull,
	  0x0180818283848586ull, 0x0180818283848586ull},
	 0x8788898a8b8c8d8eull,
	 {0x000442c3f3635800ull, 0xbf04f6204b576479ull, 0xa338078bb5105298ull,
	  0x735ac927d15a1bd5ull, 0xc0c0c0c010101010ull},
	 "[2a:0(NAME):180818283848586:8788898a8b8c8d8e:bf04f6204b576479]"},
	{"\303\251t\303\251", 5, 0,
	 {0x000000000c720980ull, 0x00000000209b1aedull, 0xb161538a4ebba4dbull,
	  0x17c7c17dcfe45a17ull, 0xc0c0c0c010101010ull},
	 {0x00, 0x00, 0x00, 0x00},
	 {0x00c3a974c3a90000ull, 0x00c3a974c3a90000ull,
	  0x00c3a974c3a90000ull, 0x00c3a974c3a90000ull},
	 0x0000000000000000ull,
	 {0x0000000000000000ull, 0x0000000000000000ull, 0x0000000000000000ull,
	  0x0000000000000000ull, 0x0000000000000000ull},
	 "[2a:0(NAME):c3a974c3a90000:0:0]"},
	{"caf\303\251.c", 7, 0,
	 {0x00000001b00f6780ull, 0x00000007ee04e8b8ull, 0xf6abfc81df48b87cull,
	  0x9737823128786094ull, 0xc0c0c0c010101010ull},
	 {0x00, 0x00, 0x63, 0x00},
	 {0x00636166c3a92e63ull, 0x00636166c3a92e63ull,
	  0xc6636166c3a92e63ull, 0x00636166c3a92e63ull},
	 0x0000000000000000ull,
	 {0x0000000000000000ull, 0x0000000000000000ull, 0x0000000000000000ull,
	  0x0000000000000000ull, 0x0000000000000000ull},
	 "[2a:0(NAME):c6636166c3a92e63:0:0]"},
	{"main.c", 6, 0,
	 {0x000000003300d180ull, 0x00000000c95ca244ull, 0x6f6e4a30fe21ba8bull,
	  0xbbd2aa6c1e7ba4a3ull, 0xc0c0c0c010101010ull},
	 {0x00, 0x00, 0x63, 0x00},
	 {0x006d61696e2e6300ull, 0x006d61696e2e6300ull,
	  0xc66d61696e2e6300ull, 0x006d61696e2e6300ull},
	 0x0000000000000000ull,
	 {0x0000000000000000ull, 0x0000000000000000ull, 0x0000000000000000ull,
	  0x0000000000000000ull, 0x0000000000000000ull},
	 "[2a:0(NAME):c66d61696e2e6300:0:0]"},
	{"main.o", 6, 0,
	 {0x000000003300d780ull, 0x00000000c95caa84ull, 0x29a82853b637ee3cull,
	  0xbbd2aa6c1e7ba4afull, 0xc0c0c0c010101010ull},
	 {0x00, 0x01, 0x6f, 0x00},
	 {0x006d61696e2e6f00ull, 0x026d61696e2e6f00ull,
	  0xde6d61696e2e6f00ull, 0x006d61696e2e6f00ull},
	 0x0000000000000000ull,
	 {0x0000000000000000ull, 0x0000000000000000ull, 0x0000000000000000ull,
	  0x0000000000000000ull, 0x0000000000000000ull},
	 "[2a:0(NAME):de6d61696e2e6f00:0:0]"},
	{"readme.txt", 10, 0,
	 {0x000000dd41d49c00ull, 0x00002f01c5b021c4ull, 0xe3a1fbeddccde6f8ull,
	  0x4959635c4e104ab9ull, 0xc0c0c0c010101010ull},
	 {0x00, 0x00, 0x00, 0x60},
	 {0x00726561646d652eull, 0x00726561646d652eull,
	  0x00726561646d652eull, 0xc0726561646d652eull},
	 0x7478740000000000ull,
	 {0x0000000000000000ull, 0x0000000000000000ull, 0x0000000000000000ull,
	  0x0000000000000000ull, 0x0000000000000000ull},
	 "[2a:0(NAME):726561646d652e:7478740000000000:0]"},
	{"x.h", 3, 0,
	 {0x00000000004c5c00ull, 0x000000000028c779ull, 0xd65a908a0510384bull,
	  0xd88ee8186b6dbf39ull, 0xc0c0c0c010101010ull},
	 {0x00, 0x00, 0x68, 0x00},
	 {0x00782e6800000000ull, 0x00782e6800000000ull,
	  0xd0782e6800000000ull, 0x00782e6800000000ull},
	 0x0000000000000000ull,
	 {0x0000000000000000ull, 0x0000000000000000ull, 0x0000000000000000ull,
	  0x0000000000000000ull, 0x0000000000000000ull},
	 "[2a:0(NAME):d0782e6800000000:0:0]"},
	{".", 1, 0,
	 {0x00000000003e3900ull, 0x0000000000001fb6ull, 0x41e4670697ff070aull,
	  0xaf63bd4c8601b7f1ull, 0xc0c0c0c010101010ull},
	 {0x00, 0x00, 0x00, 0x00},
	 {0x0000000000000000ull, 0x0000000000000000ull,
	  0x0000000000000000ull, 0x0000000000000000ull},
	 0x0000000000000000ull,
	 {0x0000000000000000ull, 0x0000000000000000ull, 0x0000000000000000ull,
	  0x0000000000000000ull, 0x0000000000000000ull},
	 "[2a:0(NAME):0:0:0]"},
	{"..", 2, 0,
	 {0x00000080003e2f00ull, 0x0000000000017c88ull, 0xa3d424ef1659840full,
	  0x08329a07b4eb8eadull, 0xc0c0c0c010101010ull},
	 {0x00, 0x00, 0x00, 0x00},
	 {0x002e2e0000000000ull, 0x002e2e0000000000ull,
	  0x002e2e0000000000ull, 0x002e2e0000000000ull},
	 0x0000000000000000ull,
	 {0x0000000000000000ull, 0x0000000000000000ull, 0x0000000000000000ull,
	  0x0000000000000000ull, 0x0000000000000000ull},
	 "[2a:0(NAME):2e2e0000000000:0:0]"},
	{".o", 2, 0,
	 {0x00000080003e4f80ull, 0x000000000001a964ull, 0xed6665dd727f3e2full,
	  0x08329a07b4eb8eecull, 0xc0c0c0c010101010ull},
	 {0x00, 0x00, 0x00, 0x00},
	 {0x002e6f0000000000ull, 0x002e6f0000000000ull,
	  0x002e6f0000000000ull, 0x002e6f0000000000ull},
	 0x0000000000000000ull,
	 {0x0000000000000000ull, 0x0000000000000000ull, 0x0000000000000000ull,
	  0x0000000000000000ull, 0x0000000000000000ull},
	 "[2a:0(NAME):2e6f0000000000:0:0]"},
	{"a.o", 3, 0,
	 {0x000000000047e180ull, 0x0000000000214dc6ull, 0xf5b991e1d4229b56ull,
	  0xd8dd06186bb013f3ull, 0xc0c0c0c010101010ull},
	 {0x00, 0x01, 0x6f, 0x00},
	 {0x00612e6f00000000ull, 0x02612e6f00000000ull,
	  0xde612e6f00000000ull, 0x00612e6f00000000ull},
	 0x0000000000000000ull,
	 {0x0000000000000000ull, 0x0000000000000000ull, 0x0000000000000000ull,
	  0x0000000000000000ull, 0x0000000000000000ull},
	 "[2a:0(NAME):de612e6f00000000:0:0]"},
	{"..c", 3, 0,
	 {0x00000080003de580ull, 0x0000000000109e2aull, 0x6cc6aef919512426ull,
	  0xd98a68186c436f94ull, 0xc0c0c0c010101010ull},
	 {0x00, 0x00, 0x63, 0x00},
	 {0x002e2e6300000000ull, 0x002e2e6300000000ull,
	  0xc62e2e6300000000ull, 0x002e2e6300000000ull},
	 0x0000000000000000ull,
	 {0x0000000000000000ull, 0x0000000000000000ull, 0x0000000000000000ull,
	  0x0000000000000000ull, 0x0000000000000000ull},
	 "[2a:0(NAME):c62e2e6300000000:0:0]"},
	{"abc.", 4, 0,
	 {0x0000000000a8b000ull, 0x00000000017f1704ull, 0xac8441e0d93ef8d4ull,
	  0x2ed9327efb844fdfull, 0xc0c0c0c010101010ull},
	 {0x00, 0x00, 0x00, 0x00},
	 {0x006162632e000000ull, 0x006162632e000000ull,
	  0x006162632e000000ull, 0x006162632e000000ull},
	 0x0000000000000000ull,
	 {0x0000000000000000ull, 0x0000000000000000ull, 0x0000000000000000ull,
	  0x0000000000000000ull, 0x0000000000000000ull},
	 "[2a:0(NAME):6162632e000000:0:0]"},
	{"a.tx", 4, 0,
	 {0x00000000009f0200ull, 0x00000000016ed098ull, 0xd887aa145a732e6aull,
	  0x2fa5437efc31d340ull, 0xc0c0c0c010101010ull},
	 {0x00, 0x00, 0x00, 0x00},
	 {0x00612e7478000000ull, 0x00612e7478000000ull,
	  0x00612e7478000000ull, 0x00612e7478000000ull},
	 0x0000000000000000ull,
	 {0x0000000000000000ull, 0x0000000000000000ull, 0x0000000000000000ull,
	  0x0000000000000000ull, 0x0000000000000000ull},
	 "[2a:0(NAME):612e7478000000:0:0]"},
	{"ab.txt", 6, 0,
	 {0x00000000297c0400ull, 0x00000000b46e41cbull, 0xf61a689c218e7528ull,
	  0xcfd01563e8a6ea8aull, 0xc0c0c0c010101010ull},
	 {0x00, 0x00, 0x00, 0x60},
	 {0x0061622e74787400ull, 0x0061622e74787400ull,
	  0x0061622e74787400ull, 0xc061622e74787400ull},
	 0x0000000000000000ull,
	 {0x0000000000000000ull, 0x0000000000000000ull, 0x0000000000000000ull,
	  0x0000000000000000ull, 0x0000000000000000ull},
	 "[2a:0(NAME):61622e74787400:0:0]"},
	{".txt", 4, 0,
	 {0x0000008000492400ull, 0x0000000000ce9443ull, 0x65bab0044f72db57ull,
	  0xea9a6c7ff76d1323ull, 0xc0c0c0c010101010ull},
	 {0x00, 0x00, 0x00, 0x00},
	 {0x002e747874000000ull, 0x002e747874000000ull,
	  0x002e747874000000ull, 0x002e747874000000ull},
	 0x0000000000000000ull,
	 {0x0000000000000000ull, 0x0000000000000000ull, 0x0000000000000000ull,
	  0x0000000000000000ull, 0x0000000000000000ull},
	 "[2a:0(NAME):2e747874000000:0:0]"},
	{"Makefile", 8, 0,
	 {0x0000000a4c201280ull, 0x000000458851dbfeull, 0xc1989a853280bc55ull,
	  0xbad5d5e45b1dee09ull, 0xc0c0c0c010101010ull},
	 {0x00, 0x00, 0x00, 0x00},
	 {0x004d616b6566696cull, 0x004d616b6566696cull,
	  0x004d616b6566696cull, 0x004d616b6566696cull},
	 0x6500000000000000ull,
	 {0x0000000000000000ull, 0x0000000000000000ull, 0x0000000000000000ull,
	  0x0000000000000000ull, 0x0000000000000000ull},
	 "[2a:0(NAME):4d616b6566696c:6500000000000000:0]"},
	{"\377\376\200", 3, 0,
	 {0x00000000006ad600ull, 0x00000000005b0b1cull, 0xa6d34a87ac36ae1aull,
	  0xd6c4361869e81dfaull, 0xc0c0c0c010101010ull},
	 {0x00, 0x00, 0x00, 0x00},
	 {0x00fffe8000000000ull, 0x00fffe8000000000ull,
	  0x00fffe8000000000ull, 0x00fffe8000000000ull},
	 0x0000000000000000ull,
	 {0x0000000000000000ull, 0x0000000000000000ull, 0x0000000000000000ull,
	  0x0000000000000000ull, 0x0000000000000000ull},
	 "[2a:0(NAME):fffe8000000000:0:0]"},
	{"f.\351", 3, 0,
	 {0x0000000000491880ull, 0x00000000002341eeull, 0xde18539ce2bef6f3ull,
	  0xd8cc08186ba1a326ull, 0xc0c0c0c010101010ull},
	 {0x00, 0x00, 0xe9, 0x00},
	 {0x00662ee900000000ull, 0x00662ee900000000ull,
	  0xd2662ee900000000ull, 0x00662ee900000000ull},
	 0x0000000000000000ull,
	 {0x0000000000000000ull, 0x0000000000000000ull, 0x0000000000000000ull,
	  0x0000000000000000ull, 0x0000000000000000ull},
	 "[2a:0(NAME):d2662ee900000000:0:0]"},
	{"z.\377\376\375", 5, 0,
	 {0x00000000060c7c80ull, 0x0000000013ce6238ull, 0x1ad3ae0a99d6283full,
	  0x452ac7f5f81f0ac3ull, 0xc0c0c0c010101010ull},
	 {0x00, 0x00, 0x00, 0xfa},
	 {0x007a2efffefd0000ull, 0x007a2efffefd0000ull,
	  0x007a2efffefd0000ull, 0xf47a2efffefd0000ull},
	 0x0000000000000000ull,
	 {0x0000000000000000ull, 0x0000000000000000ull, 0x0000000000000000ull,
	  0x0000000000000000ull, 0x0000000000000000ull},
	 "[2a:0(NAME):7a2efffefd0000:0:0]"},
	{"this_is_a_long_f"
	 "ile_name.c", 26, 0,
	 {0x0000e564161e4f80ull, 0xc360ec3df78cf2c6ull, 0x3ac62e151a25ce9dull,
	  0xc4efb637541bdff1ull, 0xc0c0c0c010101010ull},
	 {0x00, 0x00, 0x63, 0x00},
	 {0x01746869735f6973ull, 0x01746869735f6973ull,
	  0xc7746869735f6973ull, 0x01746869735f6973ull},
	 0x5f615f6c6f6e675full,
	 {0x000007c432da4f80ull, 0x0001d4e1a1076313ull, 0xc22fd224746e7c86ull,
	  0x167106ead8a305ceull, 0xc0c0c0c010101010ull},
	 "[2a:0(NAME):c7746869735f6973:5f615f6c6f6e675f:1d4e1a1076313]"},
	{"0123456789012345"
	 "6789012345678901"
	 "23456789", 40, 0,
	 {0x00001b571cfec480ull, 0x46ef13343727d470ull, 0xecc7092eaefdc849ull,
	  0x86cbe2e0725fe395ull, 0xc0c0c0c010101010ull},
	 {0x00, 0x00, 0x00, 0x00},
	 {0x0130313233343536ull, 0x0130313233343536ull,
	  0x0130313233343536ull, 0x0130313233343536ull},
	 0x3738393031323334ull,
	 {0x000013dd1cfec480ull, 0x222bc5e7028f9d41ull, 0xae931a94066225ffull,
	  0x0638f3fc64e0b46eull, 0xc0c0c0c010101010ull},
	 "[2a:0(NAME):130313233343536:3738393031323334:222bc5e7028f9d41]"},
	{"very_long_name_w"
	 "ith_extension_he"
	 "re.txt", 38, 0,
	 {0x000159d98a180c00ull, 0x700abc5917334c53ull, 0xf00f9aa173e93d43ull,
	  0xd23b7d6518028370ull, 0xc0c0c0c010101010ull},
	 {0x00, 0x00, 0x00, 0x60},
	 {0x01766572795f6c6full, 0x01766572795f6c6full,
	  0x01766572795f6c6full, 0xc1766572795f6c6full},
	 0x6e675f6e616d655full,
	 {0x0000b52b4a180c00ull, 0xda7dacc13fce114dull, 0xc6a4d5f582a4da2eull,
	  0x6ebffaa4f884ace2ull, 0xc0c0c0c010101010ull},
	 "[2a:0(NAME):1766572795f6c6f:6e675f6e616d655f:da7dacc13fce114d]"},
	{"abcdefghijklmnop"
	 "qrstuvwxyz", 26, 0,
	 {0x0000e8029e448800ull, 0x77417f03facbdc8full, 0xb7e9bbd403484425ull,
	  0x5367ac9a0a6338d8ull, 0xc0c0c0c010101010ull},
	 {0x00, 0x00, 0x00, 0x00},
	 {0x0161626364656667ull, 0x0161626364656667ull,
	  0x0161626364656667ull, 0x0161626364656667ull},
	 0x68696a6b6c6d6e6full,
	 {0x0000086d8e788800ull, 0x000201f5db6ed441ull, 0x0b9c286cf1051c57ull,
	  0xa4653da76ed7e01eull, 0xc0c0c0c010101010ull},
	 "[2a:0(NAME):161626364656667:68696a6b6c6d6e6f:201f5db6ed441]"},
	{"-", 1, 0,
	 {0x00000000003e3880ull, 0x0000000000001f06ull, 0xd53987008c3283fbull,
	  0xaf63bd4c8601b7f2ull, 0xc0c0c0c010101010ull},
	 {0x00, 0x00, 0x00, 0x00},
	 {0x002d000000000000ull, 0x002d000000000000ull,
	  0x002d000000000000ull, 0x002d000000000000ull},
	 0x0000000000000000ull,
	 {0x0000000000000000ull, 0x0000000000000000ull, 0x0000000000000000ull,
	  0x0000000000000000ull, 0x0000000000000000ull},
	 "[2a:0(NAME):2d000000000000:0:0]"},
	{"9", 1, 0,
	 {0x00000000003e3e80ull, 0x0000000000002751ull, 0x39482bba4c314ad7ull,
	  0xaf63bd4c8601b7e6ull, 0xc0c0c0c010101010ull},
	 {0x00, 0x00, 0x00, 0x00},
	 {0x0039000000000000ull, 0x0039000000000000ull,
	  0x0039000000000000ull, 0x0039000000000000ull},
	 0x0000000000000000ull,
	 {0x0000000000000000ull, 0x0000000000000000ull, 0x0000000000000000ull,
	  0x0000000000000000ull, 0x0000000000000000ull},
	 "[2a:0(NAME):39000000000000:0:0]"},
	{"hello world", 11, 0,
	 {0x000007235f7e0800ull, 0x0001dbb31f2e3c54ull, 0x7a792a4593b23ea8ull,
	  0x7dcf62cdb1910e6full, 0xc0c0c0c010101010ull},
	 {0x00, 0x00, 0x00, 0x00},
	 {0x0068656c6c6f2077ull, 0x0068656c6c6f2077ull,
	  0x0068656c6c6f2077ull, 0x0068656c6c6f2077ull},
	 0x6f726c6400000000ull,
	 {0x0000000000000000ull, 0x0000000000000000ull, 0x0000000000000000ull,
	  0x0000000000000000ull, 0x0000000000000000ull},
	 "[2a:0(NAME):68656c6c6f2077:6f726c6400000000:0]"},
	{"0123456789", 10, 0,
	 {0x00000003ae24c480ull, 0x0000140c53e4db6cull, 0x59e566464fd79dfbull,
	  0xc3f080735df30b0cull, 0xc0c0c0c010101010ull},
	 {0x00, 0x00, 0x00, 0x00},
	 {0x0030313233343536ull, 0x0030313233343536ull,
	  0x0030313233343536ull, 0x0030313233343536ull},
	 0x3738390000000000ull,
	 {0x0000000000000000ull, 0x0000000000000000ull, 0x0000000000000000ull,
	  0x0000000000000000ull, 0x0000000000000000ull},
	 "[2a:0(NAME):30313233343536:3738390000000000:0]"},
	{"01234567890", 11, 0,
	 {0x00000024cb3fa300ull, 0x0000dc879ad58ec5ull, 0x3702adb333abd540ull,
	  0xe4b55008a3fbc554ull, 0xc0c0c0c010101010ull},
	 {0x00, 0x00, 0x00, 0x00},
	 {0x0030313233343536ull, 0x0030313233343536ull,
	  0x0030313233343536ull, 0x0030313233343536ull},
	 0x3738393000000000ull,
	 {0x0000000000000000ull, 0x0000000000000000ull, 0x0000000000000000ull,
	  0x0000000000000000ull, 0x0000000000000000ull},
	 "[2a:0(NAME):30313233343536:3738393000000000:0]"},
	{".bashrc", 7, 0,
	 {0x000000801b6dd180ull, 0x00000004101fd388ull, 0x99e0fc58092aa447ull,
	  0x2ed4f92e2c2ff5e6ull, 0xc0c0c0c010101010ull},
	 {0x00, 0x00, 0x00, 0x00},
	 {0x002e626173687263ull, 0x002e626173687263ull,
	  0x002e626173687263ull, 0x002e626173687263ull},
	 0x0000000000000000ull,
	 {0x0000000000000000ull, 0x0000000000000000ull, 0x0000000000000000ull,
	  0x0000000000000000ull, 0x0000000000000000ull},
	 "[2a:0(NAME):2e626173687263:0:0]"},
	{"-x", 2, 0,
	 {0x00000080003e4f00ull, 0x000000000001a80full, 0x698249485168fe48ull,
	  0x08329b07b4eb904eull, 0xc0c0c0c010101010ull},
	 {0x00, 0x00, 0x00, 0x00},
	 {0x002d780000000000ull, 0x002d780000000000ull,
	  0x002d780000000000ull, 0x002d780000000000ull},
	 0x0000000000000000ull,
	 {0x0000000000000000ull, 0x0000000000000000ull, 0x0000000000000000ull,
	  0x0000000000000000ull, 0x0000000000000000ull},
	 "[2a:0(NAME):2d780000000000:0:0]"},
	{"abcdefghijklmno."
	 "tail_part", 25, 0,
	 {0x0000cd21a7b05000ull, 0xf3917e336dc45083ull, 0xf459888cbef088c4ull,
	  0x88e8630ff15477a7ull, 0xc0c0c0c010101010ull},
	 {0x00, 0x00, 0x00, 0x00},
	 {0x0161626364656667ull, 0x0161626364656667ull,
	  0x0161626364656667ull, 0x0161626364656667ull},
	 0x68696a6b6c6d6e6full,
	 {0x0000011f8c825000ull, 0x000015bdc801acd9ull, 0xd52322c2dd00037cull,
	  0x3a7b66bad0ebc061ull, 0xc0c0c0c010101010ull},
	 "[2a:0(NAME):161626364656667:68696a6b6c6d6e6f:15bdc801acd9]"},
	{"abcdefghijklmnop"
	 "qrstuvwx\351\377", 26, 0,
	 {0x0000e8029e46fa80ull, 0x77417f03facf8aa6ull, 0x0f9ca627995ef8fdull,
	  0x53671c9a0a62430dull, 0xc0c0c0c010101010ull},
	 {0x00, 0x00, 0x00, 0x00},
	 {0x0161626364656667ull, 0x0161626364656667ull,
	  0x0161626364656667ull, 0x0161626364656667ull},
	 0x68696a6b6c6d6e6full,
	 {0x0000086d8e7afa80ull, 0x000201f5db728258ull, 0x62e68ba5e770e575ull,
	  0xa465cda76ed8d5ebull, 0xc0c0c0c010101010ull},
	 "[2a:0(NAME):161626364656667:68696a6b6c6d6e6f:201f5db728258]"},
	{"\340\341\342\343\344\345\346\347\350\351\352\353\354\355\356\357"
	 "\360\361\362\363\364\365\366", 23, 0,
	 {0x00021fbac1d2ba00ull, 0xf9e0ca6d1be95691ull, 0x0f1c092fd0d87e07ull,
	  0xe35015b97e7fe1f6ull, 0xc0c0c0c010101010ull},
	 {0x00, 0x00, 0x00, 0x00},
	 {0x00e0e1e2e3e4e5e6ull, 0x00e0e1e2e3e4e5e6ull,
	  0x00e0e1e2e3e4e5e6ull, 0x00e0e1e2e3e4e5e6ull},
	 0xe7e8e9eaebecedeeull,
	 {0xeff0f1f2f3f4f5f6ull, 0xeff0f1f2f3f4f5f6ull, 0xeff0f1f2f3f4f5f6ull,
	  0xeff0f1f2f3f4f5f6ull, 0xeff0f1f2f3f4f5f6ull},
	 "[2a:0(NAME):e0e1e2e3e4e5e6:e7e8e9eaebecedee:eff0f1f2f3f4f5f6]"},
	{"lib.so.txt", 10, 0,
	 {0x0000013512de4c00ull, 0x00002cd8076c0f98ull, 0xbe444c5c0fe013f4ull,
	  0xd218758734492694ull, 0xc0c0c0c010101010ull},
	 {0x00, 0x00, 0x00, 0x60},
	 {0x006c69622e736f2eull, 0x006c69622e736f2eull,
	  0x006c69622e736f2eull, 0xc06c69622e736f2eull},
	 0x7478740000000000ull,
	 {0x0000000000000000ull, 0x0000000000000000ull, 0x0000000000000000ull,
	  0x0000000000000000ull, 0x0000000000000000ull},
	 "[2a:0(NAME):6c69622e736f2e:7478740000000000:0]"},
	{"a.c.o", 5, 0,
	 {0x0000000004016580ull, 0x000000000fbb85baull, 0x03299c01ac78ff19ull,
	  0x27f328c688ec7656ull, 0xc0c0c0c010101010ull},
	 {0x00, 0x01, 0x6f, 0x00},
	 {0x00612e632e6f0000ull, 0x02612e632e6f0000ull,
	  0xde612e632e6f0000ull, 0x00612e632e6f0000ull},
	 0x0000000000000000ull,
	 {0x0000000000000000ull, 0x0000000000000000ull, 0x0000000000000000ull,
	  0x0000000000000000ull, 0x0000000000000000ull},
	 "[2a:0(NAME):de612e632e6f0000:0:0]"},
	{"abcdefghijklmnop"
	 "qrstuvwxyz012345"
	 "6789.o", 38, 0,
	 {0x00015f78992c6980ull, 0x0dbf7f14d179166full, 0x5ec0861e7828e1adull,
	  0x2ca34e9d01973aa0ull, 0xc0c0c0c010101010ull},
	 {0x00, 0x01, 0x6f, 0x00},
	 {0x0161626364656667ull, 0x0361626364656667ull,
	  0xdf61626364656667ull, 0x0161626364656667ull},
	 0x68696a6b6c6d6e6full,
	 {0x0000b0ffd92c6980ull, 0x64e26b00f439ae41ull, 0x1122945af530d394ull,
	  0x5da591e73d79813eull, 0xc0c0c0c010101010ull},
	 "[2a:0(NAME):df61626364656667:68696a6b6c6d6e6f:64e26b00f439ae41]"},
	{"0123456789012345"
	 "6789012345678901"
	 "2345678901234567"
	 "8901234567890123"
	 "456789", 70, 0,
	 {0x00001b571cfb9300ull, 0x2d67f9ab7073c294ull, 0x144e4d6ae778f7f2ull,
	  0xace733abbbe91494ull, 0xc0c0c0c010101010ull},
	 {0x00, 0x00, 0x00, 0x00},
	 {0x0130313233343536ull, 0x0130313233343536ull,
	  0x0130313233343536ull, 0x0130313233343536ull},
	 0x3738393031323334ull,
	 {0x00001b571cfd6400ull, 0xfd1bccd79ae3f12dull, 0xbc968c0785580bdfull,
	  0x6eed2affa772891full, 0xc0c0c0c010101010ull},
	 "[2a:0(NAME):130313233343536:3738393031323334:fd1bccd79ae3f12d]"},
};

/* The generated names of the table: 100 x 'a'..'z', 255 printable, 255 high. */
static const char *gen_name(const struct name_vec *v, char *buf)
{
	if (!v->gen)
		return v->name;
	for (size_t i = 0; i < v->len; i++)
		buf[i] = v->gen == 1 ? (char)('a' + i % 26)
		       : v->gen == 2 ? (char)(0x20 + (i * 7) % 95)
				     : (char)(0x80 + i % 128);
	buf[v->len] = '\0';
	return buf;
}

static void test_vectors(void)
{
	char buf[256], pr[R4_KEY_PRINT_SIZE], back[24];

	for (size_t n = 0; n < R4_ARRAY_SIZE(vecs); n++) {
		const struct name_vec *v = &vecs[n];
		const char *s = gen_name(v, buf);
		r4_key k;
		int bad = t_fail;

		for (unsigned h = 0; h < R4_HASH_COUNT; h++)
			if (h != R4_HASH_RUPASOV || v->len)
				CHECK(r4_hash(h, s, v->len) == v->hash[h]);
		for (unsigned f = 0; f < R4_FIBRE_COUNT; f++)
			CHECK(r4_fibre(f, s, v->len) == (uint64_t)v->fibre[f] << 57);
		for (unsigned h = 0; h < R4_HASH_COUNT; h++) {
			for (unsigned f = 0; f < R4_FIBRE_COUNT; f++) {
				if (h == R4_HASH_RUPASOV && !v->len)
					continue;
				r4_key_entry(&k, 0x2a, s, v->len, h, f);
				CHECK(k.el[0] == 0x2a0);
				CHECK(k.el[1] == v->el1[f]);
				CHECK(k.el[2] == v->el2);
				CHECK(k.el[3] == v->el3[h]);
			}
		}
		r4_key_entry(&k, 0x2a, s, v->len, R4_HASH_R5, R4_FIBRE_EXT_1);
		r4_key_print(&k, pr, sizeof(pr));
		CHECK(!strcmp(pr, v->print));
		CHECK(r4_key_entry_is_long(&k) == (v->len > 23));
		if (v->len > 23) {
			CHECK(r4_key_entry_name(&k, back) == 0 && !back[0]);
		} else if (v->len) {
			CHECK(r4_key_entry_name(&k, back) == v->len);
			CHECK(!memcmp(back, s, v->len) && !back[v->len]);
		} else {
			CHECK(r4_key_entry_name(&k, back) == 1 && !strcmp(back, "."));
		}
		if (t_fail != bad)
			fprintf(stderr, "  ... in vector %zu (len %zu): %s\n", n, v->len, v->print);
	}
}

/* Hashed tails: el3 is the hash of bytes 15.., not 23.., and H is bit 56. */
static void test_long_names(void)
{
	const char *s = "abcdefghijklmnopqrstuvwxyz";
	r4_key k;

	for (unsigned h = 0; h < R4_HASH_COUNT; h++) {
		r4_key_entry(&k, 7, s, 26, h, R4_FIBRE_LEXIC);
		CHECK(k.el[3] == r4_hash(h, s + 15, 11));
		CHECK(k.el[1] == (UINT64_C(0x0161626364656667)));
	}
	/* 24 bytes is the first long length; 23 the last short one. */
	r4_key_entry(&k, 7, s, 24, R4_HASH_R5, R4_FIBRE_LEXIC);
	CHECK(r4_key_entry_is_long(&k) && k.el[3] == r4_hash(R4_HASH_R5, s + 15, 9));
	r4_key_entry(&k, 7, s, 23, R4_HASH_R5, R4_FIBRE_LEXIC);
	CHECK(!r4_key_entry_is_long(&k) && k.el[3] == UINT64_C(0x7071727374757677));
}

/* Read off a real image (mkfs.reiser4 1.2.2 -o create=reg40, r5 + ext_1). */
static void test_image(void)
{
	char pr[R4_KEY_PRINT_SIZE], back[24];
	uint8_t raw[R4_KEY_SIZE];
	r4_key k, sd;

	/* root stat data and its "." and ".." (debugfs.reiser4 -t) */
	r4_key_sd(&k, 41, 0, 42);
	r4_key_print(&k, pr, sizeof(pr));
	CHECK(!strcmp(pr, "[29:1(SD):0:2a:0]"));
	r4_key_entry(&k, 42, ".", 1, R4_HASH_R5, R4_FIBRE_EXT_1);
	r4_key_print(&k, pr, sizeof(pr));
	CHECK(!strcmp(pr, "[2a:0(NAME):0:0:0]"));
	CHECK(r4_key_entry_name(&k, back) == 1 && !strcmp(back, "."));
	/* ".." is a plain short name; its de_id in the cde unit is these bytes */
	r4_key_entry(&k, 42, "..", 2, R4_HASH_R5, R4_FIBRE_EXT_1);
	r4_key_encode(&k, raw);
	CHECK(!memcmp(raw + 8, "\0\0\0\0\0\x2e\x2e\0", 8));
	CHECK(k.el[1] == UINT64_C(0x002e2e0000000000) && !k.el[2] && !k.el[3]);
	CHECK(r4_key_entry_name(&k, back) == 2 && !strcmp(back, ".."));

	/* files created in the root: de_id (el1:el2:el3) and the stat-data key */
	static const struct {
		const char *name;
		uint64_t el[3], oid;
		const char *sd;
	} files[] = {
		{"abcdefghijklmnopqrstuvw",
		 {0x0061626364656667, 0x68696a6b6c6d6e6f, 0x7071727374757677},
		 0x10003, "[2a:1(SD):61626364656667:10003:0]"},
		{"readme.txt", {0x00726561646d652e, 0x7478740000000000, 0}, 0x10002,
		 "[2a:1(SD):726561646d652e:10002:0]"},
		{"abcdefghijklmnopqrstuvwxyz",
		 {0x0161626364656667, 0x68696a6b6c6d6e6f, 0x000201f5db6ed441},
		 0x10000, "[2a:1(SD):161626364656667:10000:0]"},
		{"very_long_name_with_extension_here.txt",
		 {0x01766572795f6c6f, 0x6e675f6e616d655f, 0xda7dacc13fce114d},
		 0x10004, "[2a:1(SD):1766572795f6c6f:10004:0]"},
		{"main.c", {0xc66d61696e2e6300, 0, 0}, 0x10001,
		 "[2a:1(SD):c66d61696e2e6300:10001:0]"},
		{"x.o", {0xde782e6f00000000, 0, 0}, 0x10005,
		 "[2a:1(SD):de782e6f00000000:10005:0]"},
	};
	r4_key prev;

	for (size_t i = 0; i < R4_ARRAY_SIZE(files); i++) {
		r4_key_entry(&k, 42, files[i].name, strlen(files[i].name), R4_HASH_R5,
			     R4_FIBRE_EXT_1);
		CHECK(k.el[1] == files[i].el[0] && k.el[2] == files[i].el[1] &&
		      k.el[3] == files[i].el[2]);
		/* the stat data inherits the entry's whole el1 as its ordering */
		r4_key_sd(&sd, 42, k.el[1], files[i].oid);
		r4_key_print(&sd, pr, sizeof(pr));
		CHECK(!strcmp(pr, files[i].sd));
		/* the table is in the leaf's cde unit order, i.e. key order */
		if (i)
			CHECK(r4_key_cmp(&prev, &k) < 0);
		prev = k;
	}
}

static void test_sd_body_print(void)
{
	char pr[R4_KEY_PRINT_SIZE], small[8];
	r4_key k;

	r4_key_body(&k, 0x2a, 0x6d61696e000000, 0x10000000000041, 4096);
	CHECK(k.el[0] == 0x2a4 && k.el[1] == 0x6d61696e000000 && k.el[2] == 0x10000000000041 &&
	      k.el[3] == 4096);
	r4_key_print(&k, pr, sizeof(pr));
	CHECK(!strcmp(pr, "[2a:4(FB):6d61696e000000:10000000000041:1000]"));
	CHECK(r4_key_type(&k) == R4_KEY_BODY && r4_key_offset(&k) == 4096);
	r4_key_sd(&k, 0x2a, 1, 2);
	CHECK(k.el[0] == 0x2a1 && k.el[3] == 0);
	k.el[0] = 0x2a2;
	r4_key_print(&k, pr, sizeof(pr));
	CHECK(!strcmp(pr, "[2a:2(AN):1:2:0]"));
	k.el[0] = 0x2a3;
	r4_key_print(&k, pr, sizeof(pr));
	CHECK(!strcmp(pr, "[2a:3(AB):1:2:0]"));
	/* an unknown minor prints as progs prints it */
	k = (r4_key){{0x2a7, 5, UINT64_C(0xf000000000000001), 9}};
	r4_key_print(&k, pr, sizeof(pr));
	CHECK(!strcmp(pr, "[2a:ff(?):5:f000000000000001:9]"));
	CHECK(r4_key_entry_name(&k, pr) == 0 && !pr[0]);
	k = r4_key_max();
	CHECK(r4_key_print(&k, pr, sizeof(pr)) == 74);
	CHECK(!strcmp(pr, "[fffffffffffffff:ff(?):ffffffffffffffff:ffffffffffffffff:"
			  "ffffffffffffffff]"));
	CHECK(r4_key_print(&k, small, sizeof(small)) == 74 && !strcmp(small, "[ffffff"));
}

static void test_labels(void)
{
	static const char *const hl[] = {"rupasov_hash", "r5_hash", "tea_hash", "fnv1_hash",
					 "deg_hash"};
	static const char *const fl[] = {"lexic_fibre", "dot_o_fibre", "ext_1_fibre",
					 "ext_3_fibre"};

	for (unsigned i = 0; i < R4_HASH_COUNT; i++) {
		CHECK(r4_plugin_get(R4_PTYPE_HASH, i) && !strcmp(r4_plugin_label(R4_PTYPE_HASH, i),
								 hl[i]));
		CHECK_EQ(r4_plugin_id(R4_PTYPE_HASH, hl[i], strlen(hl[i])), i);
	}
	for (unsigned i = 0; i < R4_FIBRE_COUNT; i++) {
		CHECK(r4_plugin_get(R4_PTYPE_FIBRE, i) &&
		      !strcmp(r4_plugin_label(R4_PTYPE_FIBRE, i), fl[i]));
		CHECK_EQ(r4_plugin_id(R4_PTYPE_FIBRE, fl[i], strlen(fl[i])), i);
	}
	CHECK(!r4_plugin_get(R4_PTYPE_HASH, 5) && !r4_plugin_label(R4_PTYPE_HASH, 5) &&
	      r4_hash(5, "abc", 3) == 0);
	CHECK(r4_plugin_id(R4_PTYPE_HASH, "r5", 2) == -1);
	CHECK(r4_plugin_id(R4_PTYPE_HASH, "lexic_fibre", 11) == -1);
	CHECK(!r4_plugin_get(R4_PTYPE_FIBRE, 4) && r4_fibre(4, "a.c", 3) == 0);
	CHECK(r4_plugin_id(R4_PTYPE_FIBRE, "ext_1", 5) == -1);
}

/* The registry: every plugin it lists is found again by type and label,
 * ids are unique per type, and holes (item id 4) are nobody's. */
static void test_registry(void)
{
	struct r4_plugin_info pi, prev = {0};
	size_t n = 0;
	unsigned type;

	for (; r4_plugin_nth(n, &pi); n++) {
		CHECK(pi.type < R4_PTYPE_NR && pi.label && pi.desc && pi.type_name);
		CHECK(r4_plugin_get(pi.type, pi.id) != NULL);
		CHECK_EQ(r4_plugin_id(pi.type, pi.label, strlen(pi.label)), pi.id);
		CHECK(!n || pi.type > prev.type || (pi.type == prev.type && pi.id > prev.id));
		prev = pi;
	}
	CHECK_EQ(n, 55);
	CHECK(!r4_plugin_get(R4_PTYPE_ITEM, 4) && !r4_plugin_get(R4_PTYPE_NR, 0));
	CHECK(!strcmp(r4_plugin_label(R4_PTYPE_ITEM, 2), "cde40"));
	CHECK(!strcmp(r4_plugin_label(R4_PTYPE_NODE, 1), "node41"));
	CHECK(!strcmp(r4_plugin_label(R4_PTYPE_COMPRESSION, 2), "zstd1"));
	/* plugin-set members: the disk's slot order and the type each holds */
	CHECK(r4_pset_member("formatting", 10, &type) == 3 && type == R4_PTYPE_FORMATTING);
	CHECK(r4_pset_member("create", 6, &type) == 13 && type == R4_PTYPE_FILE);
	CHECK(r4_pset_member("colour", 6, &type) == -1);
	CHECK(!strcmp(r4_pset_member_name(5), "fibration") && !r4_pset_member_name(14));
}

/* Fibres steer order: with ext_1 every "*.c" sorts after every plain name. */
static void test_order(void)
{
	r4_key dot, dotdot, a, z, c, o;

	r4_key_entry(&dot, 9, ".", 1, R4_HASH_R5, R4_FIBRE_EXT_1);
	r4_key_entry(&dotdot, 9, "..", 2, R4_HASH_R5, R4_FIBRE_EXT_1);
	r4_key_entry(&a, 9, "a", 1, R4_HASH_R5, R4_FIBRE_EXT_1);
	r4_key_entry(&z, 9, "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzz", 30, R4_HASH_R5, R4_FIBRE_EXT_1);
	r4_key_entry(&c, 9, "a.c", 3, R4_HASH_R5, R4_FIBRE_EXT_1);
	r4_key_entry(&o, 9, "a.o", 3, R4_HASH_R5, R4_FIBRE_EXT_1);
	CHECK(r4_key_cmp(&dot, &dotdot) < 0 && r4_key_cmp(&dotdot, &a) < 0);
	CHECK(r4_key_cmp(&a, &z) < 0 && r4_key_cmp(&z, &c) < 0 && r4_key_cmp(&c, &o) < 0);
	r4_key_entry(&c, 9, "a.c", 3, R4_HASH_R5, R4_FIBRE_DOT_O);
	r4_key_entry(&o, 9, "a.o", 3, R4_HASH_R5, R4_FIBRE_DOT_O);
	CHECK(r4_key_cmp(&c, &z) < 0 && r4_key_cmp(&z, &o) < 0);
	CHECK((o.el[1] & R4_KEY_FIBRE_MASK) >> R4_KEY_FIBRE_SHIFT == 1);
}

/* ---- checksums ---- */

static uint32_t crc_ref(uint32_t crc, const uint8_t *p, size_t n)
{
	while (n--) {
		crc ^= *p++;
		for (int b = 0; b < 8; b++)
			crc = crc & 1 ? crc >> 1 ^ 0x82f63b78 : crc >> 1;
	}
	return crc;
}

static uint32_t adler_ref(const uint8_t *p, size_t n)
{
	uint32_t s1 = 1, s2 = 0;

	while (n--) {
		s1 = (s1 + *p++) % 65521;
		s2 = (s2 + s1) % 65521;
	}
	return s2 << 16 | s1;
}

static void test_crc32c(unsigned long seed)
{
	static uint8_t buf[10000], zero[4096];
	const char *digits = "123456789";

	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 31 + 7);
	/* crc32c_le(seed, ...) of libreiser4 */
	CHECK(r4_crc32c(~0u, digits, 9) == 0x1cf96d7c);
	CHECK(~r4_crc32c(~0u, digits, 9) == 0xe3069283);	/* the textbook check value */
	CHECK(r4_crc32c(0, digits, 9) == 0x58e3fa20);
	CHECK(r4_crc32c(~0u, digits, 0) == 0xffffffff);
	CHECK(r4_crc32c(~0u, "a", 1) == 0x3e2fbccf);
	CHECK(r4_crc32c(0x12345678, buf, 10000) == 0x70b9f1fc);
	CHECK(r4_crc32c(~0u, buf, 4096) == 0x1e3d0817);
	CHECK(r4_crc32c(~0u, buf + 3, 13) == 0xca2e18dc);
	CHECK(r4_crc32c(~0u, zero, 4096) == 0x6706be76);
	/* every length and alignment near the 8-byte stride, then random */
	for (size_t off = 0; off < 9; off++)
		for (size_t len = 0; len < 40; len++)
			CHECK(r4_crc32c(0xdeadbeef, buf + off, len) ==
			      crc_ref(0xdeadbeef, buf + off, len));
	srand((unsigned)seed);
	for (int i = 0; i < 200; i++) {
		size_t off = (size_t)rand() % 64, len = (size_t)rand() % (sizeof(buf) - 64);
		size_t cut = len ? (size_t)rand() % len : 0;
		uint32_t s = (uint32_t)rand();

		CHECK(r4_crc32c(s, buf + off, len) == crc_ref(s, buf + off, len));
		CHECK(r4_crc32c(r4_crc32c(s, buf + off, cut), buf + off + cut, len - cut) ==
		      r4_crc32c(s, buf + off, len));
	}
}

static void test_adler32(unsigned long seed)
{
	static uint8_t buf[10000], ff[70000], zero[4092], bitmap[4096];

	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 31 + 7);
	memset(ff, 0xff, sizeof(ff));
	/* aux_adler32(0, ...) of libreiser4 */
	CHECK(r4_adler32("123456789", 9) == 0x091e01de);
	CHECK(r4_adler32("", 0) == 1);
	CHECK(r4_adler32("Wikipedia", 9) == 0x11e60398);
	CHECK(r4_adler32(buf, 10000) == 0x41977596);
	CHECK(r4_adler32(ff, 4092) == 0xc397ece6);
	CHECK(r4_adler32(zero, 4092) == 0x0ffc0001);
	CHECK(r4_adler32(ff, 70000) == 0x2a286e81);
	/*
	 * Bitmap block 18 of a fresh 64 MiB image: blocks 0..24 in use, 2048
	 * map bytes for 16384 blocks, the rest of the block 0xff.  mkfs stored
	 * 0xe259f76c (le32 6c f7 59 e2) over bytes 4..4095.
	 */
	memset(bitmap, 0, sizeof(bitmap));
	memset(bitmap + 4, 0xff, 3);
	bitmap[7] = 0x01;
	memset(bitmap + 4 + 2048, 0xff, 4096 - 4 - 2048);
	CHECK(r4_adler32(bitmap + 4, 4092) == 0xe259f76c);
	srand((unsigned)seed + 1);
	for (int i = 0; i < 100; i++) {
		size_t off = (size_t)rand() % 64, len = (size_t)rand() % (sizeof(buf) - 64);

		CHECK(r4_adler32(buf + off, len) == adler_ref(buf + off, len));
		CHECK(r4_adler32(ff + off, len * 6) == adler_ref(ff + off, len * 6));
	}
}

int main(void)
{
	unsigned long seed = t_seed();

	test_vectors();
	test_long_names();
	test_image();
	test_sd_body_print();
	test_labels();
	test_registry();
	test_order();
	test_crc32c(seed);
	test_adler32(seed);
	return T_DONE();
}
