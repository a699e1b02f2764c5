@echo off
rem envmgr-deactivate: restore exactly the environment from before envmgr-activate.
set "__ENVMGR_TMP=%TEMP%\envmgr-deactivate-%RANDOM%%RANDOM%.cmd"
envmgr deactivate --format cmd > "%__ENVMGR_TMP%"
if errorlevel 1 goto envmgr_failed
call "%__ENVMGR_TMP%"
del "%__ENVMGR_TMP%" >nul 2>&1
set "__ENVMGR_TMP="
exit /b 0
:envmgr_failed
del "%__ENVMGR_TMP%" >nul 2>&1
set "__ENVMGR_TMP="
exit /b 1
