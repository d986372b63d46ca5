# cmake -DSPV=<file.spv> -DINC=<file.inc> -P spirv_words.cmake
# Writes the 32-bit words of a SPIR-V binary (little-endian, as glslang writes it here) as
# C array elements, one per line: the body of a `const uint32_t name[] = {...}` in the shader table.
file(READ "${SPV}" hex HEX)
string(LENGTH "${hex}" digits)
math(EXPR remainder "${digits} % 8")
if(digits EQUAL 0 OR NOT remainder EQUAL 0)
  message(FATAL_ERROR "${SPV}: not a whole number of 32-bit words (${digits} hex digits)")
endif()
string(REGEX REPLACE "(..)(..)(..)(..)" "0x\\4\\3\\2\\1,\n" words "${hex}")
file(WRITE "${INC}.tmp" "${words}")
file(RENAME "${INC}.tmp" "${INC}")
