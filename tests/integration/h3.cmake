# HTTP/3 integration tests (label h3): our QUIC server and client against ngtcp2's
# gtlsserver/gtlsclient. Included from CMakeLists.txt; nothing here without -DH2B_H3=ON.
if(H2B_H3)
  h2b_integration_test(h3_serve h3_serve.sh)
  h2b_integration_test(h3_load h3_load.sh)
  set_tests_properties(integration.h3_serve integration.h3_load
                       PROPERTIES LABELS "integration;h3")
  # issue 29: a burst of /delay requests costs linear server CPU (a side-by-side ratio)
  h2b_integration_test(hostile_h3 hostile_h3.sh)
  set_tests_properties(integration.hostile_h3 PROPERTIES LABELS "integration;h3;hostile-server-h3")
endif()
