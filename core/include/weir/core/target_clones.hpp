#pragma once
// WEIR_TARGET_CLONES: one clone of a hot function per vector extension (AVX-512, AVX2, baseline),
// picked once at load by an ifunc resolver. Sanitizer builds get the baseline alone: the resolvers
// run before the ThreadSanitizer runtime is up and crash the program at load.

#if defined(WEIR_NO_TARGET_CLONES)
#define WEIR_TARGET_CLONES
#else
#define WEIR_TARGET_CLONES [[gnu::target_clones("avx512f", "avx2", "default")]]
#endif
