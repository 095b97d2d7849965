/** One plugin of one project: the key of its rows in the plugin tables (connection, deployed manifest). */
export interface ProjectPluginKey {
  pluginId: string;
  projectId: number;
}
