# Included by scripts/build-llama-server.sh (CMAKE_PROJECT_TOP_LEVEL_INCLUDES) to build
# llama-server as a unity build: each library compiled as a few large translation units
# instead of one per source file, so the shared headers (ggml, nlohmann/json, the chat
# templates) are parsed a few times rather than once per file. On 2 cores, beside other
# work: 686–704 s of CPU, against 1,214 s for the per-file build.
#
# llama.cpp itself unity-builds its model files (src/CMakeLists.txt) and leaves its core
# sources out; they compile together too. Three files must stay on their own:
# - tools/mtmd/mtmd-helper.cpp and mtmd-helper-gen.cpp stop, by #error, when compiled
#   beside mtmd's internal headers;
# - common/json.cpp specializes a template another common file instantiates first.
# (common/jinja's files each define FILENAME for their debug logs; together, the last
# definition wins, which only names another file in those logs.)
set(CMAKE_UNITY_BUILD ON)

function(maskgate_unity_exceptions)
	get_target_property(srcs llama SOURCES)
	get_target_property(dir llama SOURCE_DIR)
	set(abs)
	foreach(s IN LISTS srcs)
		if(NOT IS_ABSOLUTE "${s}")
			set(s "${dir}/${s}")
		endif()
		list(APPEND abs "${s}")
	endforeach()
	set_source_files_properties(${abs} DIRECTORY ${dir} PROPERTIES SKIP_UNITY_BUILD_INCLUSION OFF)

	get_target_property(mdir mtmd SOURCE_DIR)
	set_source_files_properties(${mdir}/mtmd-helper.cpp ${mdir}/mtmd-helper-gen.cpp
		DIRECTORY ${mdir} PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)

	get_target_property(cdir llama-common SOURCE_DIR)
	set_source_files_properties(${cdir}/json.cpp DIRECTORY ${cdir} PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
endfunction()

# The targets exist once the top-level CMakeLists.txt has been read.
cmake_language(DEFER CALL maskgate_unity_exceptions)
