@{
    RootModule        = 'Envmgr.psm1'
    ModuleVersion     = '0.1.0'
    GUID              = '6c1f3f5e-2b4a-4d7e-9a51-0e8f2b7c4d13'
    Author            = 'envmgr developers'
    Description       = 'Enter-Envmgr / Exit-Envmgr: envmgr (Visual Studio + CUDA) environments in the current PowerShell session.'
    PowerShellVersion = '5.1'
    FunctionsToExport = @('Enter-Envmgr', 'Exit-Envmgr')
    CmdletsToExport   = @()
    VariablesToExport = @()
    AliasesToExport   = @()
}
