# cmake -DIN=fatbin -DOUT=file.c -P embed_fatbin.cmake: the fatbin as a C
# array, for compilers without the assembler's .incbin (MSVC).
file(READ "${IN}" hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
file(WRITE "${OUT}" "/* Generated from ${IN}. */\n_Alignas(64) const unsigned char fdk_kernels_fatbin[] = {${bytes}0};\n")
