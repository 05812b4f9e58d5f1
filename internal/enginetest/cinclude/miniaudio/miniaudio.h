/*
 * maskgate's stand-in for miniaudio.h, written for this project.
 *
 * Why it exists: the Go module zip of github.com/ollama/ollama leaves out the
 * vendored miniaudio header, yet llama/llama.cpp/tools/mtmd/mtmd-helper.cpp
 * includes it to decode audio attachments. maskgate's tests never send audio,
 * so this header declares only the decoder API that file calls, and every
 * decoder entry point fails: audio input is not supported by a binary built
 * this way. Images (stb_image) and text are unaffected.
 *
 * mtmd-helper.cpp defines MA_NO_ENCODING, so no encoder API is declared here;
 * building with MTMD_AUDIO_DEBUG would fail to compile, on purpose.
 */
#ifndef MASKGATE_MINIAUDIO_STANDIN_H
#define MASKGATE_MINIAUDIO_STANDIN_H

#include <stddef.h>
#include <stdint.h>

#ifndef MA_API
#define MA_API static
#endif

typedef uint32_t ma_uint32;
typedef uint64_t ma_uint64;
typedef int ma_result;

#define MA_SUCCESS 0
/* Same value as upstream's MA_NOT_IMPLEMENTED, so logs read the same. */
#define MA_NOT_IMPLEMENTED (-29)

typedef enum {
    ma_format_unknown = 0,
    ma_format_u8 = 1,
    ma_format_s16 = 2,
    ma_format_s24 = 3,
    ma_format_s32 = 4,
    ma_format_f32 = 5
} ma_format;

typedef struct {
    ma_format format;
    ma_uint32 channels;
    ma_uint32 sampleRate;
} ma_decoder_config;

typedef struct {
    ma_decoder_config config;
} ma_decoder;

/* The unused attribute keeps -Wunused-function quiet when MA_API is static. */
#if defined(__GNUC__) || defined(__clang__)
#define MASKGATE_MA_UNUSED __attribute__((unused))
#else
#define MASKGATE_MA_UNUSED
#endif

MA_API MASKGATE_MA_UNUSED ma_decoder_config ma_decoder_config_init(ma_format outputFormat, ma_uint32 outputChannels, ma_uint32 outputSampleRate)
{
    ma_decoder_config config;
    config.format = outputFormat;
    config.channels = outputChannels;
    config.sampleRate = outputSampleRate;
    return config;
}

/* Audio input not supported: every attachment that looks like audio is refused here. */
MA_API MASKGATE_MA_UNUSED ma_result ma_decoder_init_memory(const void* pData, size_t dataSize, const ma_decoder_config* pConfig, ma_decoder* pDecoder)
{
    (void)pData;
    (void)dataSize;
    (void)pConfig;
    (void)pDecoder;
    return MA_NOT_IMPLEMENTED;
}

MA_API MASKGATE_MA_UNUSED ma_result ma_decoder_get_length_in_pcm_frames(ma_decoder* pDecoder, ma_uint64* pLength)
{
    (void)pDecoder;
    if (pLength != NULL) {
        *pLength = 0;
    }
    return MA_NOT_IMPLEMENTED;
}

MA_API MASKGATE_MA_UNUSED ma_result ma_decoder_read_pcm_frames(ma_decoder* pDecoder, void* pFramesOut, ma_uint64 frameCount, ma_uint64* pFramesRead)
{
    (void)pDecoder;
    (void)pFramesOut;
    (void)frameCount;
    if (pFramesRead != NULL) {
        *pFramesRead = 0;
    }
    return MA_NOT_IMPLEMENTED;
}

MA_API MASKGATE_MA_UNUSED ma_result ma_decoder_uninit(ma_decoder* pDecoder)
{
    (void)pDecoder;
    return MA_SUCCESS;
}

#endif /* MASKGATE_MINIAUDIO_STANDIN_H */
